// remram-app as the operator runs it on the real node: the image built here starts under the restricted pod
// security, answers through its Service, and signs nobody in without a member's credential. A token of an account
// that is no household member is judged by the app through the API server (SelfSubjectReview with that token, then
// the app's own read of its appliance under the Role the operator gave it): with no spec.household here, the answer
// says nobody can sign in, which only an app that read its appliance can say.
import { describe, expect, it } from "vitest";
import { kubectl, measured, namespace } from "./real-appliance.js";

export function describeApp(): void {
  describe("remram-app on the real node", () => {
    it("runs restricted, answers through its Service and refuses whoever is no member, saying why", async () => {
      const started = Date.now();
      await kubectl(
        ["-n", namespace, "rollout", "status", "deployment/moltbox-app", "--timeout=180s"],
        undefined,
        190_000,
      );
      measured.appRolloutMs = Date.now() - started;
      const ip = await kubectl([
        "-n",
        namespace,
        "get",
        "service",
        "moltbox-app",
        "-o",
        "jsonpath={.spec.clusterIP}",
      ]);
      const url = `http://${ip}:8080`;
      const health = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(10_000) });
      expect(health.status).toBe(200);
      // The root sends a browser to the app's base path, where its Ingress route on the gateway's host points too.
      const root = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(10_000) });
      expect(root.status).toBe(302);
      expect(root.headers.get("location")).toBe("/remram/");
      const page = await fetch(`${url}/remram/`, { signal: AbortSignal.timeout(10_000) });
      expect(page.status).toBe(200);
      expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
      expect(await page.text()).toContain("app.js");

      const anonymous = await fetch(`${url}/remram/api/me`, { signal: AbortSignal.timeout(10_000) });
      expect(anonymous.status).toBe(401);
      const token = (await kubectl(["-n", namespace, "create", "token", "default", "--duration=10m"])).trim();
      const stranger = await fetch(`${url}/remram/api/me`, {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(10_000),
      });
      const body = await stranger.text();
      expect(stranger.status, body).toBe(403);
      expect(body).toContain("appliance moltbox has no household (spec.household): nobody can sign in");

      const user = await kubectl([
        "-n",
        namespace,
        "get",
        "pods",
        "-l",
        "app.kubernetes.io/name=remram-app",
        "-o",
        "jsonpath={.items[0].spec.securityContext.runAsNonRoot}",
      ]);
      expect(user).toBe("true");

      // The diagnostics page's source without Prometheus: the hooks plugin's /metrics, from the app's pod through
      // the Service the operator made for it (its NetworkPolicy admits the app's pods on that port).
      const metrics = await kubectl(
        [
          "-n",
          namespace,
          "exec",
          "deployment/moltbox-app",
          "--",
          "node",
          "-e",
          "fetch(process.env.REMRAM_APP_GATEWAY_METRICS_URL).then(async (r) => console.log(r.status, await r.text()))",
        ],
        undefined,
        60_000,
      );
      expect(metrics).toMatch(/^200 /);
      expect(metrics).toContain("remram_hooks_queue_depth");
    }, 240_000);
  });
}
