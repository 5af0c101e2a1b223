// One request to the test bed's apiserver without a Kubernetes client dependency.
import { request } from "node:https";
import type { KubernetesEndpoints } from "./types.js";

export interface KubeResponse {
  status: number;
  body: string;
}

/**
 * One request to the apiserver as the token's user. The serving certificate is self-signed, so verification is
 * off (the test bed is loopback-only); this keeps the harness free of a Kubernetes client dependency.
 */
export function kubeRequest(
  endpoints: Pick<KubernetesEndpoints, "server" | "token">,
  method: string,
  path: string,
  body?: unknown,
  contentType = "application/json",
): Promise<KubeResponse> {
  return new Promise((resolveResponse, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      new URL(path, endpoints.server),
      {
        method,
        rejectUnauthorized: false,
        timeout: 10_000,
        headers: {
          authorization: `Bearer ${endpoints.token}`,
          accept: "application/json",
          ...(payload === undefined ? {} : { "content-type": contentType }),
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolveResponse({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
        );
        response.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on("error", reject);
    req.end(payload);
  });
}
