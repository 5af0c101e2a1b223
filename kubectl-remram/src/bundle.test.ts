import { describe, expect, it } from "vitest";
import { completeShellShim, completeShim, npmBundleName, packagesOf, thirdPartyLicenses } from "./bundle.js";

describe("the bundle's bookkeeping", () => {
  it("finds each inlined package once, scoped and nested ones included", () => {
    expect(
      packagesOf([
        "operator/src/cli/main.ts",
        "node_modules/js-yaml/dist/js-yaml.mjs",
        "node_modules/js-yaml/package.json",
        "node_modules/@kubernetes/client-node/dist/config.js",
        "node_modules/socks-proxy-agent/node_modules/agent-base/dist/index.js",
      ]),
    ).toEqual([
      "node_modules/@kubernetes/client-node",
      "node_modules/js-yaml",
      "node_modules/socks-proxy-agent/node_modules/agent-base",
    ]);
  });

  it("carries each package's license text", () => {
    const text = thirdPartyLicenses(["node_modules/js-yaml"]);
    expect(text).toMatch(/^kubectl-remram inlines these packages/);
    expect(text).toMatch(/js-yaml@\S+ — MIT\n\n\S/);
    expect(text).toContain("Permission is hereby granted");
  });

  it("starts the completion helpers as kubectl-remram __complete", () => {
    expect(completeShim).toMatch(/^#!\/usr\/bin\/env node\n/);
    expect(completeShim).toContain('process.argv.splice(2, 0, "__complete");');
    expect(completeShim).toContain(`await import("./${npmBundleName}");`);
    expect(completeShellShim).toMatch(/^#!\/bin\/sh\n[\s\S]*exec kubectl-remram __complete "\$@"\n$/);
  });
});
