/**
 * The admin's view of the appliance: its conditions, models and components from the RemramAppliance's status, and
 * each dream schedule's last run with its counts. Whatever the status holds beyond that is shown raw at the end.
 */

import { api } from "../api.js";
import { BarChart } from "../components/BarChart.js";
import { ErrorText, PageHeading, StatusLine, Time } from "../components/basics.js";
import { between, bytes, duration, humanize } from "../format.js";
import { useLoad } from "../hooks.js";
import type { ApplianceStatus, Condition, DreamSchedule, ModelStatus } from "../types.js";
import { MetricsSection } from "./DiagnosticsMetrics.js";

/** The status fields this page renders itself; any other is listed raw. */
const rendered = new Set([
  "conditions",
  "hardwareProfile",
  "gpu",
  "models",
  "endpoints",
  "observedGeneration",
]);

export function Diagnostics() {
  const loaded = useLoad(() => api.diagnostics(), []);
  const status = loaded.data?.appliance.status;
  return (
    <>
      <PageHeading title="Diagnostics">How the appliance is doing, for the household's admins.</PageHeading>
      <StatusLine>{loaded.loading ? "Loading…" : ""}</StatusLine>
      <ErrorText message={loaded.error} />
      {loaded.data === undefined || status === undefined ? null : (
        <>
          <p>
            <button type="button" class="secondary" disabled={loaded.loading} onClick={loaded.reload}>
              Refresh
            </button>
          </p>
          <section aria-labelledby="appliance-heading">
            <h2 id="appliance-heading">Appliance {loaded.data.appliance.name}</h2>
            <Overview status={status} />
            <Conditions conditions={status.conditions ?? []} caption="Conditions" />
          </section>
          <Models models={status.models ?? []} />
          <Components status={status} />
          <DreamSchedules schedules={loaded.data.dreamSchedules} />
          <MetricsSection />
        </>
      )}
    </>
  );
}

function Overview({ status }: { status: ApplianceStatus }) {
  const gpu = status.gpu;
  return (
    <dl class="overview">
      <dt>Hardware profile</dt>
      <dd>{status.hardwareProfile ?? "not resolved yet"}</dd>
      <dt>GPU</dt>
      <dd>
        {gpu === undefined
          ? "unknown"
          : gpu.available
            ? `${gpu.count ?? 1} × ${gpu.product ?? "GPU"}${gpu.memoryMiB === undefined ? "" : `, ${bytes(gpu.memoryMiB * 1024 * 1024)}`}`
            : "none (running on the CPU)"}
      </dd>
    </dl>
  );
}

function conditionMark(value: string): string {
  return value === "True" ? "✔ True" : value === "False" ? "✘ False" : "? Unknown";
}

function Conditions({ conditions, caption }: { conditions: Condition[]; caption: string }) {
  if (conditions.length === 0) return <p>No conditions reported yet.</p>;
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a region that scrolls sideways on a phone takes the focus, so a keyboard can scroll it (WCAG 2.1.1)
    <section class="overflow-auto" aria-label={caption} tabIndex={0}>
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Condition</th>
            <th scope="col">Status</th>
            <th scope="col">Reason</th>
            <th scope="col">Message</th>
            <th scope="col">Since</th>
          </tr>
        </thead>
        <tbody>
          {conditions.map((condition) => (
            <tr key={condition.type} class={`condition-${condition.status.toLowerCase()}`}>
              <th scope="row">{condition.type}</th>
              <td>{conditionMark(condition.status)}</td>
              <td>{condition.reason ?? ""}</td>
              <td>{condition.message ?? ""}</td>
              <td>
                <Time iso={condition.lastTransitionTime} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function modelState(model: ModelStatus) {
  if (model.pull === undefined)
    return model.pulledAt === undefined ? (
      "present"
    ) : (
      <>
        pulled <Time iso={model.pulledAt} />
      </>
    );
  const { pull } = model;
  return (
    <>
      <progress value={pull.percent ?? 0} max={100} aria-label={`Pulling ${model.name}`} />
      {pull.percent ?? 0}% · {pull.status ?? "pulling"}
      {pull.totalBytes ? ` (${bytes(pull.completedBytes)} of ${bytes(pull.totalBytes)})` : ""}
      {pull.error === undefined ? null : <span class="error"> Last attempt failed: {pull.error}</span>}
    </>
  );
}

function Models({ models }: { models: ModelStatus[] }) {
  return (
    <section aria-labelledby="models-heading">
      <h2 id="models-heading">Models</h2>
      {models.length === 0 ? (
        <p>No model reported yet.</p>
      ) : (
        // biome-ignore lint/a11y/noNoninteractiveTabindex: as for the conditions' table: a keyboard scrolls it
        <section class="overflow-auto" aria-label="Models" tabIndex={0}>
          <table>
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col">Role</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {models.map((model) => (
                <tr key={`${model.role}/${model.name}`}>
                  <th scope="row">
                    <code>{model.name}</code>
                  </th>
                  <td>{model.role === undefined ? "" : humanize(model.role)}</td>
                  <td>{modelState(model)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
    </section>
  );
}

/** A status value as short text: numbers and words as they are, objects as their fields. */
function Value({ value }: { value: unknown }) {
  if (value === null || value === undefined) return <>—</>;
  if (typeof value === "boolean") return <>{value ? "yes" : "no"}</>;
  if (typeof value === "string" && /^\d{4}-\d\d-\d\dT/.test(value)) return <Time iso={value} />;
  if (typeof value !== "object") return <>{String(value)}</>;
  if (Array.isArray(value)) return <pre class="raw">{JSON.stringify(value, null, 2)}</pre>;
  return (
    <dl class="nested">
      {Object.entries(value).map(([key, item]) => (
        <div key={key}>
          <dt>{humanize(key)}</dt>
          <dd>
            <Value value={item} />
          </dd>
        </div>
      ))}
    </dl>
  );
}

function Components({ status }: { status: ApplianceStatus }) {
  const endpoints = Object.entries(status.endpoints ?? {}).filter(([, url]) => url !== undefined);
  const others = Object.entries(status).filter(([key, value]) => !rendered.has(key) && value !== undefined);
  return (
    <section aria-labelledby="components-heading">
      <h2 id="components-heading">Components</h2>
      {endpoints.length === 0 ? null : (
        <>
          <h3>Endpoints</h3>
          <dl>
            {endpoints.map(([name, url]) => (
              <div key={name}>
                <dt>{humanize(name)}</dt>
                <dd>
                  <code>{url}</code>
                </dd>
              </div>
            ))}
          </dl>
        </>
      )}
      {others.map(([key, value]) => (
        <details key={key}>
          <summary>{humanize(key)}</summary>
          <Value value={value} />
        </details>
      ))}
    </section>
  );
}

function DreamSchedules({ schedules }: { schedules: DreamSchedule[] }) {
  return (
    <section aria-labelledby="dreams-heading">
      <h2 id="dreams-heading">Dream schedules</h2>
      {schedules.length === 0 ? <p>No dream schedule for this appliance.</p> : null}
      {schedules.map((schedule) => {
        const run = schedule.status.lastRun;
        const counts = Object.entries(run?.counts ?? {}).filter(([, value]) => typeof value === "number");
        return (
          <article key={schedule.name} aria-labelledby={`dream-${schedule.name}`}>
            <h3 id={`dream-${schedule.name}`}>{schedule.name}</h3>
            <dl class="overview">
              <dt>Schedule</dt>
              <dd>
                <code>{schedule.schedule ?? "unknown"}</code>
              </dd>
              <dt>Last run</dt>
              <dd>
                {run === undefined ? (
                  "never"
                ) : (
                  <>
                    {run.outcome ?? "unknown"}, <Time iso={run.startedAt} />
                    {run.finishedAt === undefined
                      ? null
                      : `, took ${duration(between(run.startedAt, run.finishedAt))}`}
                    {run.message === undefined ? null : <>: {run.message}</>}
                  </>
                )}
              </dd>
              <dt>Last success</dt>
              <dd>
                <Time iso={schedule.status.lastSuccessfulTime} />
              </dd>
              <dt>Next run</dt>
              <dd>
                <Time iso={schedule.status.nextScheduleTime} />
              </dd>
              {run?.mirroredProposals === undefined ? null : (
                <>
                  <dt>Proposals mirrored</dt>
                  <dd>{run.mirroredProposals}</dd>
                </>
              )}
            </dl>
            {counts.length === 0 ? null : (
              <figure>
                <BarChart title={`Counts of ${schedule.name}'s last run`} counts={counts} />
                <figcaption>What the last run did</figcaption>
              </figure>
            )}
            {schedule.status.conditions === undefined ? null : (
              <Conditions
                conditions={schedule.status.conditions}
                caption={`Conditions of ${schedule.name}`}
              />
            )}
          </article>
        );
      })}
    </section>
  );
}
