/**
 * An SPDX 2.3 SBOM for each krew archive of kubectl-remram. A scanner (syft) sees in the archive only a Node binary
 * under another name: the plugin's dependencies are inlined by esbuild (kubectl-remram/src/bundle.ts). So the SBOM
 * is written from what the bundler reports it inlined, each package with its version, declared license and npm
 * purl, beside the Node runtime the single executable is made of. The images get theirs from BuildKit (the
 * build's `sbom` attestation, made with syft); the chart has no dependencies of its own.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildStamp, bundle, repoRoot } from "../../kubectl-remram/src/bundle.js";
import { archiveName, archiveUri, type Platform } from "../../kubectl-remram/src/krew.js";

export interface InlinedPackage {
  name: string;
  version: string;
  license?: string;
}

export interface SbomInput {
  version: string;
  platform: Platform;
  /** sha256 of the archive (hex). */
  sha256: string;
  /** Where the archive is published (the release's --base-url). */
  baseUrl: string;
  nodeVersion: string;
  packages: readonly InlinedPackage[];
  /** ISO 8601, seconds precision; the release commit's time keeps the document the same for the same commit. */
  created: string;
}

const spdxId = (text: string) => `SPDXRef-${text.replace(/[^A-Za-z0-9.-]+/g, "-")}`;
const purl = (name: string, version: string) =>
  `pkg:npm/${name.startsWith("@") ? `%40${name.slice(1)}` : name}@${version}`;
/** A simple SPDX license expression: identifiers joined by AND, OR, WITH, in parentheses or not. */
const spdxExpression = /^\(*[A-Za-z0-9.-]+\+?\)*(?: (?:AND|OR|WITH) \(*[A-Za-z0-9.-]+\+?\)*)*$/;
/** The declared license when it is an SPDX expression (not npm's "SEE LICENSE IN …" or UNLICENSED). */
const license = (declared?: string) =>
  declared !== undefined && declared !== "UNLICENSED" && spdxExpression.test(declared)
    ? declared
    : "NOASSERTION";

export function pluginSbom(input: SbomInput): Record<string, unknown> {
  if (!/^[0-9a-f]{64}$/.test(input.sha256)) throw new Error(`not a sha256: ${input.sha256}`);
  const archive = archiveName(input.version, input.platform);
  const root = spdxId(`kubectl-remram-${input.platform}`);
  const node = spdxId(`node-${input.nodeVersion}`);
  const packages = [...input.packages].sort((a, b) =>
    `${a.name}@${a.version}`.localeCompare(`${b.name}@${b.version}`),
  );
  return {
    spdxVersion: "SPDX-2.3",
    dataLicense: "CC0-1.0",
    SPDXID: "SPDXRef-DOCUMENT",
    name: archive,
    documentNamespace: `${archiveUri(input.baseUrl, input.version, input.platform)}.spdx.json#${input.sha256}`,
    creationInfo: { created: input.created, creators: ["Tool: remram-hack-release-sbom"] },
    documentDescribes: [root],
    packages: [
      {
        name: "kubectl-remram",
        SPDXID: root,
        versionInfo: input.version,
        packageFileName: archive,
        downloadLocation: archiveUri(input.baseUrl, input.version, input.platform),
        checksums: [{ algorithm: "SHA256", checksumValue: input.sha256 }],
        primaryPackagePurpose: "APPLICATION",
        filesAnalyzed: false,
        licenseConcluded: "NOASSERTION",
        licenseDeclared: "NOASSERTION",
        copyrightText: "NOASSERTION",
      },
      {
        name: "node",
        SPDXID: node,
        versionInfo: input.nodeVersion,
        downloadLocation: "NOASSERTION",
        externalRefs: [
          {
            referenceCategory: "PACKAGE-MANAGER",
            referenceType: "purl",
            referenceLocator: `pkg:generic/node@${input.nodeVersion}`,
          },
        ],
        primaryPackagePurpose: "APPLICATION",
        filesAnalyzed: false,
        licenseConcluded: "NOASSERTION",
        licenseDeclared: "MIT",
        copyrightText: "NOASSERTION",
      },
      ...packages.map((entry) => ({
        name: entry.name,
        SPDXID: spdxId(`npm-${entry.name}-${entry.version}`),
        versionInfo: entry.version,
        downloadLocation: "NOASSERTION",
        externalRefs: [
          {
            referenceCategory: "PACKAGE-MANAGER",
            referenceType: "purl",
            referenceLocator: purl(entry.name, entry.version),
          },
        ],
        primaryPackagePurpose: "LIBRARY",
        filesAnalyzed: false,
        licenseConcluded: "NOASSERTION",
        licenseDeclared: license(entry.license),
        copyrightText: "NOASSERTION",
      })),
    ],
    relationships: [
      { spdxElementId: "SPDXRef-DOCUMENT", relationshipType: "DESCRIBES", relatedSpdxElement: root },
      { spdxElementId: root, relationshipType: "CONTAINS", relatedSpdxElement: node },
      ...packages.map((entry) => ({
        spdxElementId: root,
        relationshipType: "CONTAINS",
        relatedSpdxElement: spdxId(`npm-${entry.name}-${entry.version}`),
      })),
    ],
  };
}

/** The packages the single executable's bundle inlines (its `sea` flavor), read from their package.json files. */
export async function inlinedPackages(): Promise<InlinedPackage[]> {
  const scratch = mkdtempSync(join(tmpdir(), "kubectl-remram-sbom-"));
  try {
    const result = await bundle("sea", join(scratch, "kubectl-remram.cjs"), buildStamp());
    return result.packages.map((dir) => {
      const manifest = JSON.parse(
        readFileSync(join(repoRoot, dir, "package.json"), "utf8"),
      ) as InlinedPackage;
      return {
        name: manifest.name,
        version: manifest.version,
        ...(manifest.license ? { license: manifest.license } : {}),
      };
    });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
