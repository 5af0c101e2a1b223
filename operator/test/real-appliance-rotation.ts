// Rotating a Cortex credential on the real node, the documented way: `kubectl patch` of the caller's Secret. The
// kubelet swaps the new value into the Cortex pod's projected volume and the gateway's own mount at its next sync;
// Cortex re-reads its folder, accepts both values for the overlap, and refuses the old one as soon as the gateway
// presents the new one. The conversation keeps answering throughout.
import { createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { metricValue } from "../../hooks/src/testing/gateway-fixture.js";
import { waitFor } from "../../test/harness/src/wait.js";
import { hooksDiagnostics, hooksMetrics, kubectl, measured, namespace, nodeInPod } from "./real-appliance.js";
import { knownFactQuestion, say, turnTimeoutMs } from "./real-appliance-conversation.js";

const gatewaySecret = "moltbox-cortex-gateway";
/** Where the gateway's container reads its credential (operator/src/appliance/openclaw-config.ts). */
const gatewayTokenFile = "/var/run/secrets/remram/cortex/token";

const sha256 = (value: string) => createHash("sha256").update(value).digest("hex");

async function secretValue(): Promise<string> {
  const encoded = await kubectl([
    "-n",
    namespace,
    "get",
    "secret",
    gatewaySecret,
    "-o",
    "jsonpath={.data.token}",
  ]);
  return Buffer.from(encoded, "base64").toString();
}

/**
 * The status Cortex answers a retrieval presented with `token`, from inside the Cortex pod (its NetworkPolicy admits
 * only the gateway and the operator). The value goes in on stdin, so no process listing or log line carries it.
 */
async function statusWith(token: string): Promise<number> {
  const script = `
    let token = "";
    process.stdin.on("data", (chunk) => { token += chunk; });
    process.stdin.on("end", () => fetch("http://127.0.0.1:8080/retrieve", {
      method: "POST",
      headers: { authorization: "Bearer " + token.trim(), "content-type": "application/json" },
      body: JSON.stringify({ principal: { userId: "openai-user:rotation-probe", agentId: "main" },
        requestText: "anything", tokenBudget: 64 }),
    }).then((response) => console.log(response.status)));`;
  const out = await kubectl(
    ["-n", namespace, "exec", "-i", "deployment/moltbox-cortex", "-c", "cortex", "--", "node", "-e", script],
    token,
    60_000,
  );
  return Number(out.trim());
}

/** The digest of the credential file the gateway's container sees now (the value itself never leaves the pod). */
const gatewayFileDigest = () =>
  nodeInPod(
    "gateway",
    `const { createHash } = require("node:crypto");
     console.log(createHash("sha256").update(require("node:fs").readFileSync(process.argv[1], "utf8").trim()).digest("hex"));`,
    gatewayTokenFile,
  ).then((out) => out.trim());

export function describeCredentialRotation(): void {
  describe("rotating the gateway's Cortex credential with `kubectl patch`", () => {
    it(
      "keeps the conversation answering, then refuses the old value once the gateway presents the new one",
      async () => {
        const old = await secretValue();
        expect(await statusWith(old)).toBe(200);
        const fresh = randomBytes(32).toString("base64url");
        await kubectl([
          "-n",
          namespace,
          "patch",
          "secret",
          gatewaySecret,
          "--type=merge",
          "-p",
          JSON.stringify({ stringData: { token: fresh } }),
        ]);
        const patchedAt = Date.now();

        // While the kubelet has not synced yet, the person is answered as before (with the old value).
        const during = await say("Thanks, that is all for now.", "main", "drill-rotation");
        expect(during.reply.trim()).not.toBe("");

        await waitFor(async () => ((await statusWith(fresh)) === 200 ? true : undefined), {
          what: "Cortex accepting the new value (kubelet sync + Cortex's re-read)",
          timeoutMs: 240_000,
          intervalMs: 3_000,
        });
        measured.rotationCortexAcceptsMs = Date.now() - patchedAt;
        // The overlap: until the gateway presents the new value, the old one still works.
        await waitFor(async () => ((await gatewayFileDigest()) === sha256(fresh) ? true : undefined), {
          what: "the new value in the gateway's mount",
          timeoutMs: 240_000,
          intervalMs: 3_000,
        });
        measured.rotationGatewayFileMs = Date.now() - patchedAt;

        // The plugin re-reads its file at most 30 s after the last read: a run after that presents the new value,
        // which ends the old one's overlap at once (long before the 600 s bound).
        const before = await hooksMetrics();
        await new Promise((resolve) => setTimeout(resolve, 31_000));
        const after = await say(knownFactQuestion);
        expect(after.reply.trim()).not.toBe("");
        const metrics = await hooksMetrics();
        const diagnostics = () => hooksDiagnostics();
        expect(
          metricValue(metrics, "remram_hooks_retrieve_duration_seconds_count"),
          await diagnostics(),
        ).toBeGreaterThan(metricValue(before, "remram_hooks_retrieve_duration_seconds_count"));
        expect(metricValue(metrics, "remram_hooks_retrieve_errors_total"), await diagnostics()).toBe(
          metricValue(before, "remram_hooks_retrieve_errors_total"),
        );
        expect(metricValue(metrics, "remram_hooks_injections_total")).toBeGreaterThan(
          metricValue(before, "remram_hooks_injections_total"),
        );
        await waitFor(async () => ((await statusWith(old)) === 401 ? true : undefined), {
          what: "the old value refused",
          timeoutMs: 60_000,
          intervalMs: 3_000,
        });
        measured.rotationOldRefusedMs = Date.now() - patchedAt;
        expect(await statusWith(fresh)).toBe(200);

        // The operator owns the Secret, so the patch itself woke a reconcile minutes ago: it kept the value there.
        expect(sha256(await secretValue())).toBe(sha256(fresh));
      },
      turnTimeoutMs * 3,
    );
  });
}
