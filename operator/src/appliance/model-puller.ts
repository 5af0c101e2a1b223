/**
 * Model pulls as a reconciled step: ask Ollama what it has (/api/tags), start a pull for each missing model in the
 * background (one at a time per model and Ollama), and report; the reconciler requeues until the tags list them.
 */
export interface ListedModel {
  name: string;
  digest?: string;
}

export interface ModelReport {
  listed?: ListedModel[];
  pullError?: string;
}

/** The registry host of a model reference (`host[:port]/ns/name:tag`), or undefined for the default registry. */
export function modelRegistryHost(model: string): string | undefined {
  const slash = model.indexOf("/");
  if (slash === -1) return undefined;
  const first = model.slice(0, slash);
  // As Docker references: a first segment with a dot or a port, or localhost, names a registry.
  return first.includes(".") || first.includes(":") || first === "localhost" ? first : undefined;
}

export class ModelPuller {
  private readonly pulling = new Set<string>();
  private readonly failures = new Map<string, string>();

  constructor(private readonly fetchImpl: typeof fetch = fetch) {}

  /** `insecureRegistries`: hosts pulled from over plain HTTP (Ollama's insecure flag), as the spec lists them. */
  async ensure(
    ollamaUrl: string,
    models: readonly string[],
    insecureRegistries: readonly string[] = [],
  ): Promise<ModelReport> {
    let listed: ListedModel[];
    try {
      const response = await this.fetchImpl(`${ollamaUrl}/api/tags`, { signal: AbortSignal.timeout(5_000) });
      if (!response.ok) return { pullError: `GET /api/tags answered ${response.status}` };
      const body = (await response.json()) as { models?: ListedModel[] };
      listed = (body.models ?? []).map((model) => ({
        name: model.name,
        ...(model.digest ? { digest: model.digest } : {}),
      }));
    } catch (error) {
      return { pullError: `Ollama unreachable: ${error instanceof Error ? error.message : String(error)}` };
    }
    const names = new Set(listed.flatMap((model) => [model.name, model.name.replace(/:latest$/, "")]));
    const missing = models.filter((model) => !names.has(model));
    for (const model of missing) {
      const host = modelRegistryHost(model);
      this.startPull(ollamaUrl, model, host !== undefined && insecureRegistries.includes(host));
    }
    const errors = missing
      .map((model) => this.failures.get(`${ollamaUrl} ${model}`))
      .filter((error) => error);
    return { listed, ...(errors.length > 0 ? { pullError: errors.join("; ") } : {}) };
  }

  private startPull(ollamaUrl: string, model: string, insecure: boolean): void {
    const key = `${ollamaUrl} ${model}`;
    if (this.pulling.has(key)) return;
    this.pulling.add(key);
    void this.fetchImpl(`${ollamaUrl}/api/pull`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ model, stream: false, ...(insecure ? { insecure: true } : {}) }),
    })
      .then(async (response) => {
        if (response.ok) this.failures.delete(key);
        else
          this.failures.set(
            key,
            `pull answered ${response.status}: ${(await response.text()).slice(0, 200)}`,
          );
      })
      .catch((error: unknown) => {
        this.failures.set(key, `pull failed: ${error instanceof Error ? error.message : String(error)}`);
      })
      .finally(() => this.pulling.delete(key));
  }
}
