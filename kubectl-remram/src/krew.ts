/**
 * The krew plugin manifest (krew.googlecontainertools.github.com/v1alpha2, kind Plugin) for `kubectl krew install
 * --manifest=remram.yaml`: one platform entry per archive, each a single executable with its sha256. A platform
 * whose archive was not built here gets a placeholder the release pipeline fills by rendering again with that
 * archive (`release --archive darwin/arm64=FILE`). Pure; the zod schema is what the unit test holds it to.
 */
import { dump } from "js-yaml";
import { z } from "zod";

export const platforms = [
  "linux/amd64",
  "linux/arm64",
  "darwin/amd64",
  "darwin/arm64",
  "windows/amd64",
] as const;
export type Platform = (typeof platforms)[number];

export const platformOf = (value: string): Platform | undefined =>
  (platforms as readonly string[]).includes(value) ? (value as Platform) : undefined;

export const defaultBaseUrl = "https://remram.io/releases/kubectl-remram";
export const pluginName = "remram";

export const executableName = (platform: Platform): string =>
  platform.startsWith("windows/") ? "kubectl-remram.exe" : "kubectl-remram";

export const archiveName = (version: string, platform: Platform): string =>
  `kubectl-remram_v${version}_${platform.replace("/", "_")}.tar.gz`;

export const archiveUri = (baseUrl: string, version: string, platform: Platform): string =>
  `${baseUrl.replace(/\/+$/, "")}/v${version}/${archiveName(version, platform)}`;

/** What stands for a sha256 the release pipeline has yet to compute. */
export const placeholderSha256 = (version: string, platform: Platform): string =>
  `PLACEHOLDER: sha256 of ${archiveName(version, platform)}`;

const sha256 = z.string().regex(/^[0-9a-f]{64}$/, "a sha256 is 64 lowercase hex digits");
const placeholder = z.string().regex(/^PLACEHOLDER: sha256 of kubectl-remram_v\S+\.tar\.gz$/);

/** The manifest's shape as krew reads it; `placeholders` admits unfilled sha256s (the committed template). */
export function krewPluginSchema(options: { placeholders: boolean }) {
  const platform = z
    .object({
      selector: z
        .object({
          matchLabels: z
            .object({ os: z.enum(["linux", "darwin", "windows"]), arch: z.enum(["amd64", "arm64"]) })
            .strict(),
        })
        .strict(),
      uri: z.string().regex(/^https:\/\/\S+\.tar\.gz$/),
      sha256: options.placeholders ? z.union([sha256, placeholder]) : sha256,
      bin: z.string().regex(/^kubectl-remram(\.exe)?$/),
      files: z.array(z.object({ from: z.string().min(1), to: z.literal(".") }).strict()).min(1),
    })
    .strict()
    .refine(
      (entry) => entry.files.some((file) => file.from === entry.bin),
      "the bin must be one of the files",
    );
  return z
    .object({
      apiVersion: z.literal("krew.googlecontainertools.github.com/v1alpha2"),
      kind: z.literal("Plugin"),
      metadata: z.object({ name: z.literal(pluginName) }).strict(),
      spec: z
        .object({
          version: z.string().regex(/^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/),
          homepage: z.string().regex(/^https:\/\//),
          shortDescription: z.string().regex(/^[^\r\n]{1,50}$/, "one line"),
          description: z.string().min(1),
          caveats: z.string().optional(),
          platforms: z
            .array(platform)
            .min(1)
            .refine(
              (entries) =>
                new Set(entries.map((entry) => JSON.stringify(entry.selector))).size === entries.length,
              "one entry per platform",
            ),
        })
        .strict(),
    })
    .strict();
}

export type KrewPlugin = z.output<ReturnType<typeof krewPluginSchema>>;

export interface ManifestInput {
  version: string;
  baseUrl: string;
  /** The sha256 of each platform's archive that exists; the rest get placeholders. */
  sha256s: Partial<Record<Platform, string>>;
  /** Whether the archives carry the repository's LICENSE. */
  withLicense: boolean;
  /** The platforms to list (all by default). */
  platforms?: readonly Platform[];
}

export function krewManifest(input: ManifestInput): KrewPlugin {
  const store = `"\${KREW_ROOT:-$HOME/.krew}"`;
  return {
    apiVersion: "krew.googlecontainertools.github.com/v1alpha2",
    kind: "Plugin",
    metadata: { name: pluginName },
    spec: {
      version: `v${input.version}`,
      homepage: "https://remram.io",
      shortDescription: "Approve Remram proposals, inspect appliances",
      description: [
        "Approve or deny the artifact proposals of a Remram appliance (remram.io/v1alpha1 ArtifactProposal),",
        "read their diffs, summarize RemramAppliance status and ask a DreamSchedule for a dream cycle now,",
        "issue household members their credentials (user add), see, correct and forget what the assistant",
        "remembers (knowledge), export, check, back up and restore the appliance's memory, as the user of",
        "your kubeconfig. A single executable: no Node.js needed.",
      ].join("\n"),
      caveats: [
        "Deciding proposals needs the Remram chart's remram-approver ClusterRole bound in the appliance's",
        "namespace (kubectl remram help approve).",
        "",
        "For `kubectl remram <TAB>` (kubectl >= 1.26 with its completion loaded), put the completion helper",
        "on your PATH (not on Windows):",
        `  ln -sf ${store}/store/${pluginName}/v${input.version}/kubectl_complete-remram ${store}/bin/`,
      ].join("\n"),
      platforms: (input.platforms ?? platforms).map((platform) => {
        const [os, arch] = platform.split("/") as ["linux" | "darwin" | "windows", "amd64" | "arm64"];
        const bin = executableName(platform);
        const files = [
          bin,
          ...(os === "windows" ? [] : ["kubectl_complete-remram"]),
          "THIRD_PARTY_LICENSES.txt",
          ...(input.withLicense ? ["LICENSE"] : []),
        ];
        return {
          selector: { matchLabels: { os, arch } },
          uri: archiveUri(input.baseUrl, input.version, platform),
          sha256: input.sha256s[platform] ?? placeholderSha256(input.version, platform),
          bin,
          files: files.map((from) => ({ from, to: "." as const })),
        };
      }),
    },
  };
}

export function renderManifest(input: ManifestInput): string {
  const header = [
    "# krew plugin manifest of kubectl remram: kubectl krew install --manifest=remram.yaml",
    "# Written by kubectl-remram/src/cli.ts (make kubectl-plugin). A PLACEHOLDER sha256 marks an archive not built",
    "# yet, and krew refuses the manifest until the release pipeline renders it again with every archive (--archive).",
  ].join("\n");
  return `${header}\n${dump(krewManifest(input), { lineWidth: -1, noRefs: true, quoteStyle: "double" })}`;
}
