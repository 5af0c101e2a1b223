// A minimal client of the podman service's Docker-compatible API over its unix socket (what testcontainers speaks),
// for the harness's own readiness check, image check and teardown.
import { request } from "node:http";

export interface ApiResponse {
  status: number;
  body: string;
}

export function podmanRequest(
  socket: string,
  method: "GET" | "DELETE" | "POST",
  path: string,
  timeoutMs = 30_000,
): Promise<ApiResponse> {
  return new Promise((resolve, reject) => {
    const call = request({ socketPath: socket, method, path, timeout: timeoutMs }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
      );
      response.on("error", reject);
    });
    call.on("timeout", () => call.destroy(new Error(`${method} ${path}: no answer in ${timeoutMs} ms`)));
    call.on("error", reject);
    call.end();
  });
}

/** Every container the service knows, running or not (Docker API: GET /containers/json?all=true). */
export async function listContainerIds(socket: string): Promise<string[]> {
  const response = await podmanRequest(socket, "GET", "/containers/json?all=true");
  if (response.status !== 200)
    throw new Error(`listing containers answered ${response.status}: ${response.body}`);
  return (JSON.parse(response.body) as { Id: string }[]).map((container) => container.Id);
}

/**
 * Kill and remove one container with its anonymous volumes; a container already gone is fine. libpod's own endpoint:
 * the Docker one stops with the container's timeout first (10 s for a PID 1 that ignores SIGTERM).
 */
export async function removeContainer(socket: string, id: string): Promise<void> {
  const response = await podmanRequest(
    socket,
    "DELETE",
    `/v4.0.0/libpod/containers/${id}?force=true&timeout=0&v=true`,
  );
  if (response.status !== 200 && response.status !== 404) {
    throw new Error(`removing container ${id.slice(0, 12)} answered ${response.status}: ${response.body}`);
  }
}

/**
 * The ports an image declares (EXPOSE, e.g. "9200/tcp"), or undefined when neither the service's store nor the
 * read-only image store beneath it has the image.
 */
export async function imageExposedPorts(socket: string, image: string): Promise<string[] | undefined> {
  const response = await podmanRequest(socket, "GET", `/images/${encodeURIComponent(image)}/json`);
  if (response.status === 404) return undefined;
  if (response.status !== 200)
    throw new Error(`inspecting image ${image} answered ${response.status}: ${response.body}`);
  const inspected = JSON.parse(response.body) as {
    Config?: { ExposedPorts?: Record<string, object> | null };
  };
  return Object.keys(inspected.Config?.ExposedPorts ?? {});
}
