#!/usr/bin/env node
/**
 * kubectl-remram: a kubectl plugin (on PATH as `kubectl-remram`, kubectl runs it for `kubectl remram`). It acts as
 * the user of the current kubeconfig context. `kubectl_complete-remram` is the same program started with
 * `__complete` first (kubectl-remram/src/bundle.ts writes that shim). No top-level await: the single-executable
 * build bundles this as CommonJS.
 */
import { main } from "./main.js";

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
