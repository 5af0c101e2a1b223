import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { findLockGaps, type Lockfile } from "./npm-lock.js";

const entry = (version: string, extra: object = {}) => ({
  version,
  integrity: `sha512-${version}`,
  ...extra,
});

describe("the npm lock check", () => {
  it("passes the committed lock, so `npm ci` installs from scratch on every platform npm records", () => {
    const lock = JSON.parse(readFileSync(new URL("../../../package-lock.json", import.meta.url), "utf8"));
    expect(findLockGaps(lock as Lockfile)).toEqual([]);
  });

  it("names every platform package an entry declares that the lock lacks", () => {
    const lock: Lockfile = {
      lockfileVersion: 3,
      packages: {
        "": { devDependencies: { tool: "1.0.0" } },
        "node_modules/tool": entry("1.0.0", {
          optionalDependencies: { "tool-linux-x64": "1.0.0", "tool-win32-x64": "1.0.0" },
        }),
        "node_modules/tool-linux-x64": entry("1.0.0"),
      },
    };
    expect(findLockGaps(lock)).toEqual([
      "node_modules/tool needs tool-win32-x64, which the lock does not contain",
    ]);
  });

  it("resolves nested copies first, then walks up to the root, as npm does", () => {
    const lock: Lockfile = {
      lockfileVersion: 3,
      packages: {
        "": { dependencies: { a: "1" } },
        cortex: { dependencies: { b: "2", c: "1" } },
        "node_modules/cortex": { link: true },
        "node_modules/a": entry("1", { dependencies: { b: "1" } }),
        "node_modules/a/node_modules/b": entry("1"),
        "cortex/node_modules/b": entry("2"),
        "node_modules/c": entry("1", {
          peerDependencies: { d: "1", e: "1" },
          peerDependenciesMeta: { e: { optional: true } },
        }),
      },
    };
    expect(findLockGaps(lock)).toEqual(["node_modules/c needs d, which the lock does not contain"]);
  });

  it("refuses entries without an integrity hash and locks older than npm 7's format", () => {
    expect(
      findLockGaps({ lockfileVersion: 3, packages: { "": {}, "node_modules/x": { version: "1.0.0" } } }),
    ).toEqual(["node_modules/x: no integrity hash"]);
    expect(findLockGaps({ lockfileVersion: 1 })).toHaveLength(1);
  });
});
