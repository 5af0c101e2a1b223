import { readFileSync } from "node:fs";
import { join } from "node:path";
import { load } from "js-yaml";
import { describe, expect, it } from "vitest";
import { packageRoot, packageVersion, repositoryLicense } from "./bundle.js";
import {
  archiveName,
  defaultBaseUrl,
  krewManifest,
  krewPluginSchema,
  platforms,
  renderManifest,
} from "./krew.js";

const sha = (digit: string) => digit.repeat(64);
const input = { version: "1.2.3", baseUrl: "https://example.org/dl/", sha256s: {}, withLicense: false };

describe("the krew manifest", () => {
  it("lists every platform, each archive a single executable with the completion helper and the licenses", () => {
    const manifest = krewManifest({ ...input, sha256s: { "linux/amd64": sha("a") }, withLicense: true });
    expect(manifest.spec.version).toBe("v1.2.3");
    expect(manifest.spec.platforms.map((entry) => entry.selector.matchLabels)).toEqual(
      platforms.map((platform) => ({ os: platform.split("/")[0], arch: platform.split("/")[1] })),
    );
    const [linux] = manifest.spec.platforms;
    expect(linux).toEqual({
      selector: { matchLabels: { os: "linux", arch: "amd64" } },
      uri: "https://example.org/dl/v1.2.3/kubectl-remram_v1.2.3_linux_amd64.tar.gz",
      sha256: sha("a"),
      bin: "kubectl-remram",
      files: ["kubectl-remram", "kubectl_complete-remram", "THIRD_PARTY_LICENSES.txt", "LICENSE"].map(
        (from) => ({
          from,
          to: ".",
        }),
      ),
    });
    const windows = manifest.spec.platforms.find((entry) => entry.selector.matchLabels.os === "windows");
    expect(windows?.bin).toBe("kubectl-remram.exe");
    expect(windows?.files.map((file) => file.from)).not.toContain("kubectl_complete-remram");
    expect(windows?.sha256).toBe("PLACEHOLDER: sha256 of kubectl-remram_v1.2.3_windows_amd64.tar.gz");
    expect(manifest.spec.caveats).toContain("/store/remram/v1.2.3/kubectl_complete-remram");
  });

  it("holds to krew's shape: placeholders only in a template, a full one for a release", () => {
    const template = load(renderManifest(input));
    expect(krewPluginSchema({ placeholders: true }).safeParse(template).success).toBe(true);
    expect(krewPluginSchema({ placeholders: false }).safeParse(template).success).toBe(false);
    const sha256s = Object.fromEntries(platforms.map((platform, index) => [platform, sha(String(index))]));
    const full = load(renderManifest({ ...input, sha256s }));
    expect(krewPluginSchema({ placeholders: false }).parse(full)).toEqual(
      krewManifest({ ...input, sha256s }),
    );
  });

  it("refuses what krew would refuse", () => {
    const schema = krewPluginSchema({ placeholders: true });
    const good = krewManifest(input);
    const [first] = good.spec.platforms;
    if (first === undefined) throw new Error("no platform");
    const broken = (spec: object) => schema.safeParse({ ...good, spec: { ...good.spec, ...spec } }).success;
    expect(broken({ version: "1.2.3" })).toBe(false);
    expect(broken({ platforms: [] })).toBe(false);
    expect(broken({ platforms: [first, first] })).toBe(false);
    expect(broken({ platforms: [{ ...first, sha256: "abc" }] })).toBe(false);
    expect(broken({ platforms: [{ ...first, uri: "http://example.org/a.tar.gz" }] })).toBe(false);
    expect(broken({ platforms: [{ ...first, files: [{ from: "LICENSE", to: "." }] }] })).toBe(false);
    expect(schema.safeParse({ ...good, kind: "Plugins" }).success).toBe(false);
  });

  it("names archives by version and platform", () => {
    expect(archiveName("0.1.0", "darwin/arm64")).toBe("kubectl-remram_v0.1.0_darwin_arm64.tar.gz");
  });

  it("is committed as generated (kubectl-remram/krew/remram.yaml; npm run manifest -w kubectl-remram)", () => {
    const expected = renderManifest({
      version: packageVersion(),
      baseUrl: defaultBaseUrl,
      sha256s: {},
      withLicense: repositoryLicense() !== undefined,
    });
    expect(readFileSync(join(packageRoot, "krew", "remram.yaml"), "utf8")).toBe(expected);
  });
});
