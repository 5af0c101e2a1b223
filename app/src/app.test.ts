import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "./app.js";
import { appConfig } from "./config.js";

// Routing only: no request here reaches Kubernetes (nothing is signed in); the metrics scrapes find no Cortex.
let app: FastifyInstance;
let webDir: string;

beforeAll(async () => {
  webDir = mkdtempSync(join(tmpdir(), "remram-app-pages-"));
  writeFileSync(join(webDir, "index.html"), "<!doctype html><title>Remram</title>");
  writeFileSync(join(webDir, "app.js"), "export {};");
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: "c", server: "https://127.0.0.1:1" }],
    users: [{ name: "u", token: "t" }],
    contexts: [{ name: "x", cluster: "c", user: "u" }],
    currentContext: "x",
  });
  app = await buildApp({
    config: appConfig.parse({
      basePath: "/remram/",
      namespace: "home",
      appliance: "box",
      cortexUrl: "http://127.0.0.1:1",
      cortexToken: "an-app-credential-of-16",
      logLevel: "silent",
    }),
    kubeConfig,
    logger: false,
    webDir,
  });
});

afterAll(async () => {
  await app.close();
  rmSync(webDir, { recursive: true, force: true });
});

describe("the app under a base path", () => {
  it("serves the pages and their files under it, with the security headers", async () => {
    const page = await app.inject({ url: "/remram/" });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain("<title>Remram</title>");
    expect(page.headers["content-security-policy"]).toContain("default-src 'self'");
    expect((await app.inject({ url: "/remram/app.js" })).statusCode).toBe(200);
  });

  it("sends the root and the base path without its slash to it, so the pages' relative names resolve", async () => {
    for (const url of ["/", "/remram"]) {
      const answer = await app.inject({ url });
      expect(answer.statusCode, url).toBe(302);
      expect(answer.headers.location).toBe("/remram/");
    }
  });

  it("answers the API under it only, and /healthz at the root for the kubelet", async () => {
    expect((await app.inject({ url: "/remram/api/me" })).json()).toMatchObject({
      statusCode: 401,
      message: "sign in first: no credential was presented",
    });
    expect((await app.inject({ url: "/api/me" })).statusCode).toBe(404);
    expect((await app.inject({ url: "/app.js" })).statusCode).toBe(404);
    expect((await app.inject({ url: "/healthz" })).json()).toEqual({ status: "ok" });
  });

  it("refuses a sign-in without a token, under the base path", async () => {
    const answer = await app.inject({
      method: "POST",
      url: "/remram/api/session",
      headers: { "content-type": "application/json" },
      payload: "{}",
    });
    expect(answer.statusCode).toBe(400);
  });
});

describe("the app's base path setting", () => {
  it("takes / or a path that starts and ends with a slash, and refuses anything else", () => {
    const base = {
      namespace: "home",
      appliance: "box",
      cortexUrl: "http://c:1",
      cortexToken: "x".repeat(16),
    };
    expect(appConfig.parse(base).basePath).toBe("/");
    expect(appConfig.parse({ ...base, basePath: "/a/b-c/" }).basePath).toBe("/a/b-c/");
    for (const basePath of ["remram/", "/remram", "/../", "//", "/a b/"])
      expect(appConfig.safeParse({ ...base, basePath }).success, basePath).toBe(false);
  });
});
