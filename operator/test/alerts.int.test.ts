import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { dump, load } from "js-yaml";
import { afterAll, describe, expect, it } from "vitest";
import { binPath, repoRoot, runDir } from "../../test/harness/src/paths.js";

// The chart's PrometheusRule, rendered by Helm as kube-prometheus-stack would receive it, checked and unit-tested by
// the real promtool: each alert fires on the series that should raise it, and stays quiet on healthy ones.
const run = promisify(execFile);
mkdirSync(runDir, { recursive: true });
const scratch = mkdtempSync(join(runDir, "alerts-"));
// The chart's default leaves runbook_url out (no public host yet); a base URL set at install gives each alert its page.
const runbooks = "https://docs.example.test/remram/runbooks";

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function renderedRules(...values: string[]): Promise<{ groups: unknown[] }> {
  const { stdout } = await run(binPath("helm"), [
    "template",
    "remram-operator",
    join(repoRoot, "charts/remram-operator"),
    "--api-versions",
    "monitoring.coreos.com/v1",
    "--show-only",
    "templates/prometheusrule.yaml",
    ...values.flatMap((value) => ["--set", value]),
  ]);
  const rule = load(stdout) as { kind: string; spec: { groups: unknown[] } };
  expect(rule.kind).toBe("PrometheusRule");
  return { groups: rule.spec.groups };
}

const alert = (labels: Record<string, string>, annotations: Record<string, string>) => ({
  exp_labels: labels,
  exp_annotations: annotations,
});

const ruleTests = {
  rule_files: ["rules.yaml"],
  evaluation_interval: "1m",
  tests: [
    {
      interval: "1m",
      input_series: [
        {
          series: 'remram_appliance_condition{namespace="home",appliance="box",type="Ready"}',
          values: "0x90",
        },
        {
          series: 'remram_appliance_condition{namespace="home",appliance="box",type="CortexReady"}',
          values: "0x90",
        },
        {
          series: 'remram_appliance_condition{namespace="home",appliance="box",type="OllamaReady"}',
          values: "1x90",
        },
        {
          series: 'remram_appliance_condition{namespace="home",appliance="ok",type="Ready"}',
          values: "1x90",
        },
        // Created 8.1 days before the test's clock starts, and one created at its start.
        {
          series: 'remram_proposal_pending_since_timestamp_seconds{namespace="home",proposal="old"}',
          values: "-700000x90",
        },
        {
          series: 'remram_proposal_pending_since_timestamp_seconds{namespace="home",proposal="new"}',
          values: "0x90",
        },
        // box's check finds three problems from minute 5; ok's finds nothing.
        {
          series: 'remram_appliance_consistency_findings{namespace="home",appliance="box"}',
          values: "0 0 0 0 0 3x86",
        },
        { series: 'remram_appliance_consistency_findings{namespace="home",appliance="ok"}', values: "0x90" },
        // box was last checked 25 h before the test's clock starts; ok is checked every minute.
        {
          series:
            'remram_appliance_consistency_last_check_timestamp_seconds{namespace="home",appliance="box"}',
          values: "-90000x90",
        },
        {
          series:
            'remram_appliance_consistency_last_check_timestamp_seconds{namespace="home",appliance="ok"}',
          values: "0+60x90",
        },
        // box's spec.backup names a claim that appears only at minute 30; ok's destination is there.
        {
          series: 'remram_appliance_backup_destination_missing{namespace="home",appliance="box"}',
          values: "1x30 0x60",
        },
        {
          series: 'remram_appliance_backup_destination_missing{namespace="home",appliance="ok"}',
          values: "0x90",
        },
        // Cortex in "home" has a backup destination and its last backup completed 30 h before the clock starts;
        // in "calm" one completes every minute; in "none" there is no destination (nothing to alert on).
        { series: 'cortex_backup_configured{namespace="home",pod="cx"}', values: "1x90" },
        {
          series: 'cortex_backup_last_success_timestamp_seconds{namespace="home",pod="cx"}',
          values: "-108000x90",
        },
        { series: 'cortex_backup_configured{namespace="calm",pod="cx"}', values: "1x90" },
        {
          series: 'cortex_backup_last_success_timestamp_seconds{namespace="calm",pod="cx"}',
          values: "0+60x90",
        },
        { series: 'cortex_backup_configured{namespace="none",pod="cx"}', values: "0x90" },
        { series: 'cortex_backup_last_success_timestamp_seconds{namespace="none",pod="cx"}', values: "0x90" },
        { series: 'remram_dream_runs_total{outcome="succeeded"}', values: "0+1x90" },
        { series: 'remram_dream_runs_total{outcome="skipped"}', values: "0 0 0 0 0 1x86" },
        { series: 'leader_election_master_status{name="remram-operator"}', values: "0x90" },
        { series: 'workqueue_depth{name="appliance"}', values: "80x90" },
        { series: 'workqueue_depth{name="dreamschedule"}', values: "3x90" },
        { series: 'controller_runtime_reconcile_total{controller="appliance"}', values: "0+10x90" },
        { series: 'controller_runtime_reconcile_errors_total{controller="appliance"}', values: "0+5x90" },
        { series: 'controller_runtime_reconcile_total{controller="dreamschedule"}', values: "0+10x90" },
        { series: 'controller_runtime_reconcile_errors_total{controller="dreamschedule"}', values: "0x90" },
        // Cortex in "home" answers half its retrievals degraded; in "calm" none.
        {
          series: 'cortex_http_request_duration_seconds_count{namespace="home",route="/retrieve"}',
          values: "0+60x90",
        },
        { series: 'cortex_retrieve_degraded_total{namespace="home",reason="partial"}', values: "0+30x90" },
        { series: 'cortex_retrieve_degraded_total{namespace="home",reason="embedding"}', values: "0+30x90" },
        {
          series: 'cortex_http_request_duration_seconds_count{namespace="calm",route="/retrieve"}',
          values: "0+60x90",
        },
        { series: 'cortex_retrieve_degraded_total{namespace="calm",reason="partial"}', values: "0x90" },
        // One gateway times out on a fifth of its retrievals; its capture queue piles up while Cortex is away.
        {
          series: 'remram_hooks_retrieve_duration_seconds_count{namespace="home",pod="gw"}',
          values: "0+10x90",
        },
        { series: 'remram_hooks_retrieve_timeouts_total{namespace="home",pod="gw"}', values: "0+2x90" },
        { series: 'remram_hooks_queue_depth{namespace="home",pod="gw",queue="capture"}', values: "150x90" },
        { series: 'remram_hooks_queue_depth{namespace="home",pod="gw",queue="reflect"}', values: "3x90" },
        // Cortex in "home" refuses a write to its full volume at minute 5, and nothing after.
        {
          series: 'cortex_volume_full_refusals_total{namespace="home",route="/archive/transcripts"}',
          values: "0 0 0 0 0 1x86",
        },
        // Cortex's archive folder in "home" has 5 % left, its workspace folder (in "calm") 50 %.
        { series: 'cortex_volume_size_bytes{namespace="home",volume="archive"}', values: "1000x90" },
        { series: 'cortex_volume_available_bytes{namespace="home",volume="archive"}', values: "50x90" },
        { series: 'cortex_volume_size_bytes{namespace="calm",volume="workspace"}', values: "1000x90" },
        { series: 'cortex_volume_available_bytes{namespace="calm",volume="workspace"}', values: "500x90" },
        // A re-embedding in "home" stops moving at minute 3 (its model was never pulled); the one in "calm" finishes.
        {
          series: 'cortex_embedding_fill_remaining{namespace="home",pod="cx",kind="objects"}',
          values: "500 400 300 200x87",
        },
        {
          series: 'cortex_embedding_fill_remaining{namespace="calm",pod="cy",kind="objects"}',
          values: "300-10x30 0x59",
        },
        // Three of four reflections fail to validate.
        { series: 'remram_hooks_reflections_total{namespace="home",outcome="extracted"}', values: "0+1x90" },
        {
          series: 'remram_hooks_reflections_total{namespace="home",outcome="invalid_delta"}',
          values: "0+3x90",
        },
      ],
      alert_rule_test: [
        {
          eval_time: "20m",
          alertname: "RemramApplianceNotReady",
          exp_alerts: [
            alert(
              { severity: "critical", namespace: "home", appliance: "box", type: "Ready" },
              {
                summary: "Appliance home/box has not been Ready for 15 minutes.",
                description: "`kubectl remram status` shows which component holds it back.",
                runbook_url: `${runbooks}/RemramApplianceNotReady.md`,
              },
            ),
          ],
        },
        {
          eval_time: "20m",
          alertname: "RemramComponentNotReady",
          exp_alerts: [
            alert(
              { severity: "warning", namespace: "home", appliance: "box", type: "CortexReady" },
              {
                summary: "CortexReady is False on appliance home/box.",
                description: "The condition's reason and message say what is missing.",
                runbook_url: `${runbooks}/RemramComponentNotReady.md`,
              },
            ),
          ],
        },
        { eval_time: "10m", alertname: "RemramApplianceNotReady", exp_alerts: [] },
        {
          eval_time: "80m",
          alertname: "RemramProposalPendingTooLong",
          exp_alerts: [
            alert(
              { severity: "info", namespace: "home", proposal: "old" },
              {
                summary: "Proposal home/old waits for a decision.",
                description:
                  "Review it with `kubectl remram diff` and decide with `kubectl remram approve` or `deny`.",
                runbook_url: `${runbooks}/RemramProposalPendingTooLong.md`,
              },
            ),
          ],
        },
        {
          eval_time: "10m",
          alertname: "RemramDreamScheduleMissed",
          exp_alerts: [
            alert(
              { severity: "warning", outcome: "skipped" },
              {
                summary: "A scheduled dream cycle was skipped or failed in the last day.",
                description:
                  "The DreamSchedule's lastRun and Warning events give the reason (deadline missed, previous run active, Cortex error).",
                runbook_url: `${runbooks}/RemramDreamScheduleMissed.md`,
              },
            ),
          ],
        },
        { eval_time: "4m", alertname: "RemramDreamScheduleMissed", exp_alerts: [] },
        { eval_time: "10m", alertname: "RemramCortexVolumeLow", exp_alerts: [] },
        {
          eval_time: "20m",
          alertname: "RemramCortexVolumeLow",
          exp_alerts: [
            alert(
              { severity: "warning", namespace: "home", volume: "archive" },
              {
                summary: "Cortex's archive volume in home has less than 10% left.",
                description:
                  "When it is full, promotions and archived transcripts are refused until space is freed.",
                runbook_url: `${runbooks}/RemramCortexVolumeLow.md`,
              },
            ),
          ],
        },
        { eval_time: "4m", alertname: "RemramCortexVolumeFull", exp_alerts: [] },
        {
          eval_time: "8m",
          alertname: "RemramCortexVolumeFull",
          exp_alerts: [
            alert(
              { severity: "critical", namespace: "home" },
              {
                summary: "Cortex in home refuses writes: a volume it writes to is full.",
                description:
                  "Promotions and archived transcripts wait (the operator and the gateway retry them) until space is freed on the Cortex volume.",
                runbook_url: `${runbooks}/RemramCortexVolumeFull.md`,
              },
            ),
          ],
        },
        { eval_time: "20m", alertname: "RemramCortexVolumeFull", exp_alerts: [] },
        { eval_time: "30m", alertname: "RemramReembeddingStalled", exp_alerts: [] },
        {
          eval_time: "40m",
          alertname: "RemramReembeddingStalled",
          exp_alerts: [
            alert(
              { severity: "warning", namespace: "home", pod: "cx", kind: "objects" },
              {
                summary: "Re-embedding the memory in home has not moved for 30 minutes.",
                description:
                  "After an embedding model change Cortex cannot embed (the model is not pulled, Ollama is down); what is not re-embedded yet is found by its words only. The appliance's EmbeddingsCurrent condition says why.",
                runbook_url: `${runbooks}/RemramReembeddingStalled.md`,
              },
            ),
          ],
        },
        { eval_time: "20m", alertname: "RemramBackupStale", exp_alerts: [] },
        {
          eval_time: "40m",
          alertname: "RemramBackupStale",
          exp_alerts: [
            alert(
              { severity: "warning", namespace: "home", pod: "cx" },
              {
                summary: "No backup of the memory in home has completed for a long time.",
                description:
                  "Cortex has a backup destination but no recent complete backup in it; the appliance's BackedUp condition and cortex_backup_failures_total{reason} say why.",
                runbook_url: `${runbooks}/RemramBackupStale.md`,
              },
            ),
          ],
        },
        { eval_time: "4m", alertname: "RemramDataInconsistent", exp_alerts: [] },
        {
          eval_time: "10m",
          alertname: "RemramDataInconsistent",
          exp_alerts: [
            alert(
              { severity: "critical", namespace: "home", appliance: "box" },
              {
                summary: "The last consistency check of home/box found 3 problems.",
                description:
                  "Some of the household's memory is damaged or out of step; `kubectl remram check` lists what.",
                runbook_url: `${runbooks}/RemramDataInconsistent.md`,
              },
            ),
          ],
        },
        { eval_time: "10m", alertname: "RemramBackupDestinationMissing", exp_alerts: [] },
        {
          eval_time: "20m",
          alertname: "RemramBackupDestinationMissing",
          exp_alerts: [
            alert(
              { severity: "warning", namespace: "home", appliance: "box" },
              {
                summary: "The backup destination of home/box is not there.",
                description:
                  "spec.backup names a claim or Secret that does not exist or lacks a key, so nothing is backed up; the appliance's BackedUp condition names it.",
                runbook_url: `${runbooks}/RemramBackupDestinationMissing.md`,
              },
            ),
          ],
        },
        { eval_time: "35m", alertname: "RemramBackupDestinationMissing", exp_alerts: [] },
        { eval_time: "30m", alertname: "RemramConsistencyCheckStale", exp_alerts: [] },
        {
          eval_time: "70m",
          alertname: "RemramConsistencyCheckStale",
          exp_alerts: [
            alert(
              { severity: "warning", namespace: "home", appliance: "box" },
              {
                summary: "The data of home/box has not been checked for a long time.",
                description:
                  "The operator cannot run Cortex's consistency check; the appliance's DataConsistent condition says why.",
                runbook_url: `${runbooks}/RemramConsistencyCheckStale.md`,
              },
            ),
          ],
        },
        {
          eval_time: "10m",
          alertname: "RemramOperatorNoLeader",
          exp_alerts: [
            alert(
              { severity: "critical" },
              {
                summary: "No Remram operator replica holds the Lease.",
                description: "Nothing reconciles appliances, schedules or proposals.",
                runbook_url: `${runbooks}/RemramOperatorNoLeader.md`,
              },
            ),
          ],
        },
        {
          eval_time: "20m",
          alertname: "RemramOperatorWorkqueueBacklog",
          exp_alerts: [
            alert(
              { severity: "warning", name: "appliance" },
              {
                summary: "Work queue appliance has stayed above 50 keys.",
                description: "The operator cannot keep up or is stuck behind the API server.",
                runbook_url: `${runbooks}/RemramOperatorWorkqueueBacklog.md`,
              },
            ),
          ],
        },
        {
          eval_time: "20m",
          alertname: "RemramOperatorReconcileErrors",
          exp_alerts: [
            alert(
              { severity: "warning", controller: "appliance" },
              {
                summary: "Controller appliance fails more than 10% of its reconciles.",
                description: "Check the operator's log and the Warning events of the affected objects.",
                runbook_url: `${runbooks}/RemramOperatorReconcileErrors.md`,
              },
            ),
          ],
        },
        {
          eval_time: "30m",
          alertname: "RemramRetrievalDegraded",
          exp_alerts: [
            alert(
              { severity: "warning", namespace: "home" },
              {
                summary: "More than a quarter of retrievals in home answer degraded.",
                description:
                  "Cortex answers lexical-only or empty while OpenSearch or the embedding model fails; cortex_retrieve_degraded_total{reason} says which.",
                runbook_url: `${runbooks}/RemramRetrievalDegraded.md`,
              },
            ),
          ],
        },
        { eval_time: "10m", alertname: "RemramRetrievalDegraded", exp_alerts: [] },
        {
          eval_time: "30m",
          alertname: "RemramInjectionTimingOut",
          exp_alerts: [
            alert(
              { severity: "warning", namespace: "home", pod: "gw" },
              {
                summary: "The gateway home/gw gives up on more than 10% of its Cortex retrievals.",
                description:
                  "Those turns run without memory. Cortex is slower than the plugin's cortex.retrieveTimeoutMs; compare with its retrieval latency.",
                runbook_url: `${runbooks}/RemramInjectionTimingOut.md`,
              },
            ),
          ],
        },
        {
          eval_time: "40m",
          alertname: "RemramPluginQueueBacklog",
          exp_alerts: [
            alert(
              { severity: "warning", namespace: "home", pod: "gw", queue: "capture" },
              {
                summary:
                  "The hooks plugin's capture queue in home/gw has held over 100 items for 30 minutes.",
                description:
                  "Nothing is lost (the queue is on disk) but Cortex is not taking deliveries; the gateway log names the failure (delivery_failed).",
                runbook_url: `${runbooks}/RemramPluginQueueBacklog.md`,
              },
            ),
          ],
        },
        { eval_time: "20m", alertname: "RemramPluginQueueBacklog", exp_alerts: [] },
        {
          eval_time: "80m",
          alertname: "RemramReflectionsFailing",
          exp_alerts: [
            alert(
              { severity: "warning", namespace: "home" },
              {
                summary: "Most reflections in home produce nothing Cortex can store.",
                description:
                  "The reflection model's replies do not validate or its runs fail; the gateway log has reflection_invalid and reflection_failed with the reason.",
                runbook_url: `${runbooks}/RemramReflectionsFailing.md`,
              },
            ),
          ],
        },
        {
          eval_time: "10m",
          alertname: "RemramOperatorDown",
          exp_alerts: [
            alert(
              // absent() of a filtered expression carries no labels of the missing series.
              { severity: "critical" },
              {
                summary: "The Remram operator is not running or not scraped.",
                description: "No healthy scrape of remram-operator-metrics for 5 minutes.",
                runbook_url: `${runbooks}/RemramOperatorDown.md`,
              },
            ),
          ],
        },
      ],
    },
  ],
};

describe("the chart's alert rules", () => {
  it("pass promtool's check and fire exactly where they should", async () => {
    const rules = await renderedRules(`metrics.prometheusRule.runbookBaseUrl=${runbooks}/`);
    writeFileSync(join(scratch, "rules.yaml"), dump(rules));
    writeFileSync(join(scratch, "rules.test.yaml"), dump(ruleTests));
    await run(binPath("promtool"), ["check", "rules", join(scratch, "rules.yaml")]);
    const tested = await run(binPath("promtool"), ["test", "rules", join(scratch, "rules.test.yaml")]).catch(
      (error: { stdout?: string; stderr?: string }) => error,
    );
    expect(`${tested.stdout ?? ""}${tested.stderr ?? ""}`).toContain("SUCCESS");
  });

  it("leave runbook_url out while runbookBaseUrl is unset, the chart's default", async () => {
    const rules = (await renderedRules()).groups as { rules: { alert?: string; annotations?: object }[] }[];
    const alerts = rules.flatMap((group) => group.rules).filter((rule) => rule.alert !== undefined);
    expect(alerts.length).toBeGreaterThan(0);
    for (const rule of alerts) expect(rule.annotations, rule.alert).not.toHaveProperty("runbook_url");
  });
});
