// A person's memory taken out with `kubectl remram export` (the plugin built here) on real pods: the plugin reads
// Cortex's admin credential with the household admin's kubeconfig and forwards a port to the Cortex pod, past the
// NetworkPolicy that admits only the gateway and the operator; a user without those rights is told which they lack.
import { rmSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { conditions, kubectl, kubectlAs, kubernetes, measured, namespace } from "./real-appliance.js";
import { knownFact, person } from "./real-appliance-conversation.js";
import { approver, installPlugin, serviceAccountKubeconfig } from "./real-appliance-dream.js";

/** `kubectl remram export` of the person as the namespace's ServiceAccount `account`: its error output. */
async function exportAs(account: string, plugins: string): Promise<string> {
  const kubeconfig = await serviceAccountKubeconfig(account);
  return kubectlAs(kubeconfig, ["remram", "export", person.userId, "-n", namespace], plugins)
    .then(
      () => "exported",
      (error: { stderr?: string }) => error.stderr ?? String(error),
    )
    .finally(() => rmSync(kubeconfig, { force: true })); // it holds the account's token
}

export function describeExport(): void {
  describe("a person's memory exported with `kubectl remram export`", () => {
    it("prints what the assistant holds about the person, to an admin only", async () => {
      const plugins = await installPlugin();
      const admin = kubernetes.kubeconfig;
      const markdown = await kubectlAs(admin, ["remram", "export", person.userId, "-n", namespace], plugins);
      expect(markdown.stdout).toContain(`# What Remram holds about ${person.userId}`);
      expect(markdown.stdout).toContain(knownFact);
      const json = await kubectlAs(
        admin,
        ["remram", "export", person.userId, "-n", namespace, "-o", "json"],
        plugins,
      );
      const exported = JSON.parse(json.stdout) as {
        userId: string;
        knowledge: { statement: string; owner: { userId?: string } }[];
      };
      expect(exported.userId).toBe(person.userId);
      expect(exported.knowledge.some((object) => object.statement.includes(knownFact))).toBe(true);
      expect(exported.knowledge.every((object) => object.owner.userId === person.userId)).toBe(true);

      // The approver of the dream suite may read proposals and appliances, not Cortex's admin credential.
      const refused = await exportAs(approver, plugins);
      expect(refused).toContain(`may not get secrets in namespace ${namespace}`);
      expect(refused).toContain("pods/portforward");

      // One who may read the credential and list pods, but not forward a port, is told that.
      const reader = "export-without-forward";
      await kubectl(["-n", namespace, "create", "serviceaccount", reader]);
      await kubectl([
        "-n",
        namespace,
        "create",
        "role",
        reader,
        "--verb=get,list",
        "--resource=secrets,pods,remramappliances.remram.io",
      ]);
      await kubectl([
        "-n",
        namespace,
        "create",
        "rolebinding",
        reader,
        `--role=${reader}`,
        `--serviceaccount=${namespace}:${reader}`,
      ]);
      const notForwarded = await exportAs(reader, plugins);
      expect(notForwarded).toContain(`you may not create pods/portforward in namespace ${namespace}`);
      for (const kind of ["rolebinding", "role", "serviceaccount"]) {
        await kubectl(["-n", namespace, "delete", kind, reader]);
      }
    }, 120_000);
  });

  describe("the appliance's data checked for consistency", () => {
    it("is found sound by the operator's check and by `kubectl remram check` after a day's use", async () => {
      // The operator checked once Cortex was available (status); this run's conversations, saves, transcripts,
      // dream and promotion have happened since, so the plugin's check reads all of them.
      const dataConsistent = (await conditions()).find((condition) => condition.type === "DataConsistent");
      expect(dataConsistent, JSON.stringify(dataConsistent)).toMatchObject({
        status: "True",
        reason: "ChecksPassed",
      });
      const plugins = await installPlugin();
      const admin = kubernetes.kubeconfig;
      const json = await kubectlAs(admin, ["remram", "check", "-n", namespace, "-o", "json"], plugins).catch(
        (error: { stdout?: string; stderr?: string }) => {
          throw new Error(`kubectl remram check failed: ${error.stderr ?? ""}\n${error.stdout ?? ""}`);
        },
      );
      const report = JSON.parse(json.stdout) as {
        consistent: boolean;
        durationMs: number;
        counts: Record<string, number>;
        findings: unknown[];
      };
      expect(report.findings).toEqual([]);
      expect(report.consistent).toBe(true);
      expect(report.counts.knowledge).toBeGreaterThan(0);
      expect(report.counts.commits).toBeGreaterThan(0);
      measured.consistencyCheck = { durationMs: report.durationMs, counts: report.counts };
      const text = await kubectlAs(admin, ["remram", "check", "-n", namespace], plugins);
      expect(text.stdout).toMatch(/^Checked moltbox at \S+ in [\d.]+ s: \d+ knowledge objects/);
      expect(text.stdout).toContain("Nothing wrong.");
    }, 120_000);
  });
}
