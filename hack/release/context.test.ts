import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { copySources, instructions, stageContext } from "./context.js";
import { releaseImages, repoRoot } from "./plan.js";

const scratch = mkdtempSync(join(tmpdir(), "release-context-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("what a Dockerfile copies", () => {
  it("is read from COPY and ADD, flags and continuation lines included, other stages and comments left out", () => {
    const dockerfile = [
      "# COPY commented/out .",
      "ARG BASE=debian",
      "FROM debian AS build",
      "COPY --chown=1000:1000 package.json package-lock.json ./",
      "copy a/b/ \\",
      "     c/d.txt \\",
      "     /dest/",
      'COPY ["with space/x.json", "/x.json"]',
      "ADD --chmod=644 ./docs/../README.md /README.md",
      "FROM scratch",
      "COPY --from=build /app /app",
      "RUN echo COPY not/this .",
    ].join("\n");
    expect(instructions(dockerfile)).toHaveLength(9);
    expect(copySources(dockerfile)).toEqual([
      "README.md",
      "a/b",
      "c/d.txt",
      "package-lock.json",
      "package.json",
      "with space/x.json",
    ]);
  });

  it.each([
    ["COPY dist/*.js /app/", /wildcards are not staged/],
    ["ADD https://example.org/x.tgz /x.tgz", /remote sources are not staged/],
    ["COPY ../secret /secret", /not a path inside the context/],
    ["COPY /etc/passwd /x", /not a path inside the context/],
    ["COPY . /app", /not a path inside the context/],
    ["COPY onlyone", /a source and a destination are needed/],
  ])("refuses %s", (line, message) => {
    expect(() => copySources(`FROM scratch\n${line}\n`)).toThrow(message);
  });

  it("is, for the released images, what docs/testbed-images.md says each context holds", () => {
    const sources = Object.fromEntries(
      releaseImages("0.0.0").map((image) => [
        image.name,
        copySources(readFileSync(join(repoRoot, image.dockerfile), "utf8")),
      ]),
    );
    const manifests = ["contract", "cortex", "hooks", "operator", "test/harness"].map(
      (workspace) => `${workspace}/package.json`,
    );
    const workspace = (name: string) =>
      ["contract/dist", `${name}/dist`, ...manifests, "package-lock.json", "package.json"].sort();
    expect(sources).toEqual({
      operator: [...workspace("operator"), "hardware-profiles"].sort(),
      cortex: [...workspace("cortex"), "cortex/embedding-model"].sort(),
      app: [
        ...workspace("app"),
        "app/package.json",
        "operator/dist/api/approval.js",
        "operator/dist/runtime/kube-client.js",
      ].sort(),
      hooks: ["hooks/dist/index.js", "hooks/openclaw.plugin.json", "hooks/package.json"],
      "openclaw-gateway": [],
    });
  });
});

describe("a staged build context", () => {
  /** A checkout with the hooks Dockerfile and, unless left out, the files it copies. */
  function checkout(name: string, leaveOut: string[] = []): string {
    const root = join(scratch, name);
    const files: Record<string, string> = {
      "hooks/Dockerfile": readFileSync(join(repoRoot, "hooks", "Dockerfile"), "utf8"),
      "hooks/openclaw.plugin.json": "{}",
      "hooks/package.json": '{"name":"hooks"}',
      "hooks/dist/index.js": "export {};",
      "hooks/src/index.ts": "not copied",
      "node_modules/x/index.js": "not copied",
    };
    for (const [path, content] of Object.entries(files)) {
      if (leaveOut.includes(path)) continue;
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), content);
    }
    return root;
  }

  it("holds exactly the files the Dockerfile copies, at their paths", () => {
    const out = join(scratch, "hooks-context");
    const staged = stageContext("hooks/Dockerfile", out, checkout("complete"));
    expect(staged).toEqual(["hooks/dist/index.js", "hooks/openclaw.plugin.json", "hooks/package.json"]);
    expect(readFileSync(join(out, "hooks/dist/index.js"), "utf8")).toBe("export {};");
    expect(existsSync(join(out, "hooks/src"))).toBe(false);
    expect(existsSync(join(out, "node_modules"))).toBe(false);
    expect(existsSync(join(out, "hooks/Dockerfile"))).toBe(false);
  });

  it("takes a fetched path from the folder make setup fetched it into, and names the folder when it is missing", () => {
    const dockerfile = "FROM scratch\nCOPY hooks/package.json /p.json\nCOPY model /opt/model\n";
    const root = checkout("fetched");
    writeFileSync(join(root, "Dockerfile.fetched"), dockerfile);
    const cache = join(scratch, "cache-model");
    mkdirSync(cache, { recursive: true });
    writeFileSync(join(cache, "model.onnx"), "weights");
    const out = join(scratch, "fetched-context");
    expect(stageContext("Dockerfile.fetched", out, root, { model: cache })).toEqual([
      "hooks/package.json",
      "model",
    ]);
    expect(readFileSync(join(out, "model", "model.onnx"), "utf8")).toBe("weights");
    const absent = join(scratch, "no-such-cache");
    expect(() =>
      stageContext("Dockerfile.fetched", join(scratch, "unfetched"), root, { model: absent }),
    ).toThrow(`Dockerfile.fetched copies model (from ${absent}), not fetched yet`);
  });

  it("is refused, naming the file, when the checkout lacks one (dist/ not built)", () => {
    const root = checkout("unbuilt", ["hooks/dist/index.js"]);
    expect(() => stageContext("hooks/Dockerfile", join(scratch, "unbuilt-context"), root)).toThrow(
      /hooks\/Dockerfile copies hooks\/dist\/index.js, missing from the checkout \(run npm run build/,
    );
    expect(existsSync(join(scratch, "unbuilt-context"))).toBe(false);
  });
});
