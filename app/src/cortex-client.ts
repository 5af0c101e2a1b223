/**
 * The app's client for Cortex, as the `app` caller, over the contract's route table: a request is the route's body
 * schema's input type and an answer is parsed with its 200 schema, so a contract change breaks this build, not a
 * page. Cortex's refusals (400, 403, 404, 409, 410) reach the person with Cortex's message; Cortex being down is
 * a 503 that says so.
 */
import { type RouteContract, routes } from "@remram/contract";
import type { z } from "zod";
import { AppError } from "./errors.js";

type Ok<Route extends RouteContract> = Route["schema"]["response"] extends {
  200: infer Schema extends z.ZodType;
}
  ? z.output<Schema>
  : never;
type Body<Route extends RouteContract> = Route["schema"]["body"] extends z.ZodType
  ? z.input<Route["schema"]["body"]>
  : undefined;

export interface CortexEndpoint {
  url: string;
  token: string;
}

export class CortexClient {
  constructor(
    private readonly endpoint: CortexEndpoint,
    private readonly timeoutMs = 30_000,
  ) {}

  /** POST a route's body, or GET it with `path` (the URL with its parameters filled in). */
  async call<Route extends RouteContract>(
    route: Route,
    body: Body<Route>,
    path: string = route.url,
    timeoutMs = this.timeoutMs,
  ): Promise<Ok<Route>> {
    let response: Response;
    try {
      response = await fetch(new URL(path, this.endpoint.url), {
        method: route.method,
        headers: {
          authorization: `Bearer ${this.endpoint.token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new AppError(503, `the knowledge service (Cortex) is not answering: ${(error as Error).message}`);
    }
    const text = await response.text();
    const parsed: unknown = text === "" ? undefined : JSON.parse(text);
    if (!response.ok) {
      const message =
        (parsed as { message?: string } | undefined)?.message ?? `Cortex answered ${response.status}`;
      // Cortex refusing the app's own credential is the app's misconfiguration, not the person's doing.
      if (response.status === 401) throw new AppError(503, `Cortex refused the app's credential: ${message}`);
      throw new AppError(response.status >= 500 ? 503 : response.status, message);
    }
    const schema = route.schema.response[200];
    if (schema === undefined) throw new Error(`route ${route.url} has no 200 schema`);
    return schema.parse(parsed) as Ok<Route>;
  }
}

export { routes };
