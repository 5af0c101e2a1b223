// Cortex's layers, checked by `make lint`: imports point down only. From the bottom: the wire contract
// (@remram/contract in contract/src: zod only, nothing of Cortex), core (pure rules), store (OpenSearch, Ollama),
// knowledge (the knowledge-object floor every feature shares), the platform (context, config, metrics, auth), the
// features side by side (ingest, retrieve, dimensions, health, reflect, remember, person-knowledge, dream, promote,
// archive), and the composition (app, maturation, main, index) that nothing imports.
// Type-only imports count: a type from above is an upward dependency too.
const src = "^cortex/src/";
const features =
  "(ingest|retrieve|dimensions|health|reflect|remember|person-knowledge|dream|promote|archive|embeddings|storage)";
const composition = `${src}(app|maturation|main|index)\\.ts$`;
const tests = "\\.test\\.ts$";

/** A rule that `layer` imports only from `allowed` (paths under cortex/src, as regular expressions). */
function onlyBelow(name, layer, allowed) {
  return {
    name,
    severity: "error",
    comment: `${layer} may import only ${allowed.join(", ")}`,
    from: { path: `${src}${layer}`, pathNot: tests },
    to: { path: src, pathNot: allowed.map((path) => `${src}${path}`) },
  };
}

module.exports = {
  forbidden: [
    {
      name: "contract-is-the-floor",
      severity: "error",
      comment: "the wire contract imports only itself and zod: never Cortex, the operator or the hooks",
      from: { path: "^contract/src/", pathNot: [tests, "^contract/src/tools/"] },
      to: { pathNot: ["^contract/src/", "^node_modules/zod/"] },
    },
    onlyBelow("core-is-pure", "core/", ["core/"]),
    onlyBelow("store-below-knowledge", "store/", ["store/", "core/"]),
    onlyBelow("knowledge-is-the-floor", "knowledge/", ["knowledge/", "store/", "core/"]),
    onlyBelow("platform-below-features", "(context|config|metrics|auth|http-errors)\\.ts$", [
      "(context|config|metrics|auth|http-errors)\\.ts$",
      "knowledge/",
      "store/",
      "core/",
    ]),
    onlyBelow("test-fixtures-below-features", "testing/", ["testing/", "knowledge/", "store/", "core/"]),
    {
      name: "features-side-by-side",
      severity: "error",
      comment: "a feature shares through core, knowledge or the contract, never another feature's modules",
      from: { path: `${src}${features}/`, pathNot: tests },
      to: { path: `${src}${features}/`, pathNot: `${src}$1/` },
    },
    {
      name: "nothing-imports-the-composition",
      severity: "error",
      comment: "features get what they need as app.cortex (context.ts), never from the app factory",
      from: { path: src, pathNot: [composition, tests] },
      to: { path: composition },
    },
    { name: "no-cycles", severity: "error", from: { path: src }, to: { circular: true } },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "cortex/tsconfig.json" },
    // Follow @remram/contract into its source (its package.json's `@remram/source` export condition), so the
    // contract's rule holds.
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["@remram/source", "import", "default"],
    },
  },
};
