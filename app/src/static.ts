/**
 * The browser pages at the base path (/ or /remram/): the files `npm run build:web -w app` writes into app/dist/web (index.html, app.js,
 * app.css, their maps and gzip copies), and the security headers on every response of the app, the API's too.
 *
 * Only plain file names directly in that directory are served (no folder, no dot file, no `..`), with a known
 * type; nothing outside it can be named. Each answer is `Cache-Control: no-cache` with an ETag: a browser asks again
 * every time and gets a 304 while the file is unchanged, so a new build shows at once without hashed names. The gzip
 * copy goes to a browser that accepts gzip. Without the directory, the base path answers 503 saying how to build the
 * pages. Under a base path, the root and the base path without its slash redirect to it: the pages name their files
 * and the API relative to it.
 */
import { readFile, stat } from "node:fs/promises";
import { extname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import { errorBody } from "./errors.js";

/** app/dist/web, whether this runs compiled from app/dist or from app/src through tsx. */
export const defaultWebDir = fileURLToPath(new URL("../dist/web/", import.meta.url));

/**
 * On every response. The pages load scripts, styles and data only from this origin and run no inline code;
 * `img-src data:` admits the small SVG icons Pico CSS embeds (checkbox ticks, select arrows).
 */
export const securityHeaders: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

const contentTypes: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
  ".webmanifest": "application/manifest+json",
};

/** A file directly in the directory: no separator, no leading dot, so neither `..` nor a hidden file. */
const plainName = /^[A-Za-z0-9][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)+$/;

export interface WebPagesOptions {
  /** The built pages; defaultWebDir when not given. */
  dir?: string | undefined;
  /** Where the pages are served: "/" or a path that starts and ends with "/". */
  basePath?: string;
}

async function fileAt(path: string) {
  try {
    const info = await stat(path);
    return info.isFile() ? info : undefined;
  } catch {
    return undefined;
  }
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

const webPagesPlugin: FastifyPluginAsync<WebPagesOptions> = async (app, options) => {
  const root = resolve(options.dir ?? defaultWebDir);
  const basePath = options.basePath ?? "/";

  app.addHook("onSend", async (_request, reply, payload) => {
    for (const [name, value] of Object.entries(securityHeaders))
      if (!reply.hasHeader(name)) reply.header(name, value);
    return payload;
  });

  const notFound = (reply: FastifyReply, name: string) =>
    reply
      .code(404)
      .send(errorBody(404, `no page file ${JSON.stringify(name)} here; the pages start at ${basePath}`));

  async function serve(request: FastifyRequest, reply: FastifyReply, name: string) {
    if (!(await isDirectory(root)))
      return reply
        .code(503)
        .send(errorBody(503, `the pages are not built (no ${root}): run npm run build:web -w app`));
    const type = contentTypes[extname(name)];
    if (!plainName.test(name) || type === undefined) return notFound(reply, name);
    const path = join(root, name);
    const info = await fileAt(path);
    if (info === undefined) return notFound(reply, name);

    const gzipPath = `${path}.gz`;
    const gzipInfo = /\bgzip\b/.test(String(request.headers["accept-encoding"] ?? ""))
      ? await fileAt(gzipPath)
      : undefined;
    const chosen = gzipInfo ?? info;
    const etag = `"${chosen.size.toString(16)}-${Math.trunc(chosen.mtimeMs).toString(16)}${gzipInfo ? "-gz" : ""}"`;
    reply
      .header("content-type", type)
      .header("cache-control", "no-cache")
      .header("etag", etag)
      .header("vary", "accept-encoding");
    if (gzipInfo !== undefined) reply.header("content-encoding", "gzip");
    const match = request.headers["if-none-match"];
    if (match?.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag))
      return reply.code(304).send();
    return reply.send(await readFile(gzipInfo === undefined ? path : gzipPath));
  }

  app.get(basePath, (request, reply) => serve(request, reply, "index.html"));
  app.get<{ Params: { file: string } }>(`${basePath}:file`, (request, reply) =>
    serve(request, reply, request.params.file),
  );
  if (basePath !== "/") {
    const toPages = (_request: FastifyRequest, reply: FastifyReply) => reply.redirect(basePath, 302);
    app.get("/", toPages);
    app.get(basePath.replace(/\/$/, ""), toPages);
  }
};

/** Registered without encapsulation (as fastify-plugin would), so the headers hook covers every route. */
export const webPages = Object.assign(webPagesPlugin, {
  [Symbol.for("skip-override")]: true,
  [Symbol.for("fastify.display-name")]: "remram-web-pages",
});
