import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { archiveName, platforms } from "../../kubectl-remram/src/krew.js";
import { findArchives, sbomCreated } from "./plugin.js";
import { pluginSbom } from "./sbom.js";

const scratch = mkdtempSync(join(tmpdir(), "release-plugin-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const input = {
  version: "1.2.3",
  platform: "darwin/arm64" as const,
  sha256: "ab".repeat(32),
  baseUrl: "https://code.example.test/remram/remram/releases/download",
  nodeVersion: "24.21.0",
  packages: [
    { name: "js-yaml", version: "4.1.0", license: "MIT" },
    { name: "@kubernetes/client-node", version: "2.0.1", license: "Apache-2.0" },
    { name: "odd", version: "1.0.0", license: "SEE LICENSE IN LICENSE.md" },
    { name: "none", version: "0.1.0" },
    { name: "dual", version: "2.0.0", license: "(MIT OR Apache-2.0)" },
    { name: "private", version: "0.0.1", license: "UNLICENSED" },
  ],
  created: "2026-01-02T03:04:05Z",
};

interface SpdxPackage {
  name: string;
  SPDXID: string;
  versionInfo: string;
  licenseDeclared: string;
  externalRefs?: { referenceLocator: string }[];
  checksums?: { algorithm: string; checksumValue: string }[];
  downloadLocation: string;
}

describe("the SBOM of a krew archive", () => {
  const sbom = pluginSbom(input) as {
    spdxVersion: string;
    name: string;
    documentNamespace: string;
    creationInfo: { created: string };
    documentDescribes: string[];
    packages: SpdxPackage[];
    relationships: { spdxElementId: string; relationshipType: string; relatedSpdxElement: string }[];
  };

  it("describes the archive by its name, download URL and sha256", () => {
    expect(sbom.spdxVersion).toBe("SPDX-2.3");
    expect(sbom.name).toBe("kubectl-remram_v1.2.3_darwin_arm64.tar.gz");
    const [root] = sbom.packages;
    expect(root?.SPDXID).toBe(sbom.documentDescribes[0]);
    expect(root?.downloadLocation).toBe(`${input.baseUrl}/v1.2.3/kubectl-remram_v1.2.3_darwin_arm64.tar.gz`);
    expect(root?.checksums).toEqual([{ algorithm: "SHA256", checksumValue: input.sha256 }]);
    expect(sbom.documentNamespace).toBe(`${root?.downloadLocation}.spdx.json#${input.sha256}`);
    expect(sbom.creationInfo.created).toBe(input.created);
  });

  it("lists the Node runtime and every inlined package with its purl and declared license", () => {
    const byName = Object.fromEntries(sbom.packages.map((entry) => [entry.name, entry]));
    expect(byName.node?.versionInfo).toBe("24.21.0");
    expect(byName.node?.externalRefs?.[0]?.referenceLocator).toBe("pkg:generic/node@24.21.0");
    expect(byName["@kubernetes/client-node"]?.externalRefs?.[0]?.referenceLocator).toBe(
      "pkg:npm/%40kubernetes/client-node@2.0.1",
    );
    expect(byName["@kubernetes/client-node"]?.licenseDeclared).toBe("Apache-2.0");
    expect(byName["js-yaml"]?.licenseDeclared).toBe("MIT");
    expect(byName.odd?.licenseDeclared).toBe("NOASSERTION");
    expect(byName.none?.licenseDeclared).toBe("NOASSERTION");
    expect(byName.private?.licenseDeclared).toBe("NOASSERTION");
    expect(byName.dual?.licenseDeclared).toBe("(MIT OR Apache-2.0)");
    // The archive contains each of them; every SPDX id is unique and valid.
    const ids = sbom.packages.map((entry) => entry.SPDXID);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^SPDXRef-[A-Za-z0-9.-]+$/);
    const contained = sbom.relationships.filter((each) => each.relationshipType === "CONTAINS");
    expect(contained.map((each) => each.relatedSpdxElement).sort()).toEqual(ids.slice(1).sort());
  });

  it("is the same for the same input, whatever order the bundler reports the packages in", () => {
    expect(pluginSbom({ ...input, packages: [...input.packages].reverse() })).toEqual(sbom);
  });

  it("refuses a checksum that is not a sha256", () => {
    expect(() => pluginSbom({ ...input, sha256: "abc" })).toThrow("not a sha256: abc");
  });

  it("is dated from SOURCE_DATE_EPOCH", () => {
    expect(sbomCreated("1700000000")).toBe("2023-11-14T22:13:20Z");
    expect(sbomCreated("")).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(() => sbomCreated("soon")).toThrow(/SOURCE_DATE_EPOCH soon/);
  });
});

describe("the archives the platform builds leave", () => {
  function folder(name: string, files: string[]): string {
    const dir = join(scratch, name);
    mkdirSync(dir, { recursive: true });
    for (const file of files) writeFileSync(join(dir, file), file);
    return dir;
  }
  const all = platforms.map((platform) => archiveName("1.2.3", platform));

  it("are found, one for every platform", () => {
    const dir = folder("complete", [...all, "notes.txt"]);
    expect(findArchives(dir, "1.2.3")).toEqual(
      Object.fromEntries(platforms.map((platform) => [platform, join(dir, archiveName("1.2.3", platform))])),
    );
  });

  it("are refused when one is missing or of another version", () => {
    const dir = folder("incomplete", [...all.slice(1), "kubectl-remram_v1.2.2_linux_amd64.tar.gz"]);
    expect(() => findArchives(dir, "1.2.3")).toThrow(
      `${dir}: missing kubectl-remram_v1.2.3_linux_amd64.tar.gz; kubectl-remram_v1.2.2_linux_amd64.tar.gz is not an archive of 1.2.3`,
    );
  });
});
