/**
 * Stands in for undici in kubectl-remram's bundles (bundle.ts aliases it). @kubernetes/client-node imports undici
 * for its fetch-based API clients, watch and log; the plugin uses only KubeConfig's https options
 * (operator/src/runtime/kube-client.ts), so none of it runs. undici 8 needs Node >= 22.19 even to load (it binds
 * zlib's zstd at import), and the npm bundle must load on Node 20: these stubs keep the imports satisfied and
 * fail loudly if anything ever does call them.
 */
const unavailable = (what: string): never => {
  throw new Error(
    `${what} is not part of the kubectl-remram bundle (undici is stubbed out; see kubectl-remram/src/undici-stub.ts)`,
  );
};

export class Agent {
  constructor() {
    unavailable("undici.Agent");
  }
}

export class ProxyAgent {
  constructor() {
    unavailable("undici.ProxyAgent");
  }
}

export function fetch(): Promise<never> {
  return Promise.reject(new Error("undici.fetch is not part of the kubectl-remram bundle"));
}
