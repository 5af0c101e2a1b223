/**
 * Artifact proposals: changes the assistant wants to make to its workspace files, each with its diff and rationale,
 * approved or denied by the person with an optional comment. The server says (`blocker`) when the person cannot
 * decide one, and Kubernetes has the last word: its refusal is shown as it came.
 */
import { useId, useState } from "preact/hooks";
import { api } from "../api.js";
import { ErrorText, PageHeading, StatusLine, Time } from "../components/basics.js";
import { DiffView } from "../components/DiffView.js";
import { useLoad } from "../hooks.js";
import type { Proposal } from "../types.js";

export function Proposals() {
  const loaded = useLoad(() => api.proposals(), []);
  const [status, setStatus] = useState("");
  const proposals = loaded.data?.proposals ?? [];
  const pending = proposals.filter((proposal) => proposal.phase === "Pending");
  const decided = proposals.filter((proposal) => proposal.phase !== "Pending");
  const replace = (next: Proposal) =>
    loaded.setData((data) =>
      data === undefined
        ? data
        : { proposals: data.proposals.map((proposal) => (proposal.name === next.name ? next : proposal)) },
    );

  return (
    <>
      <PageHeading title="Proposals">
        Changes the assistant proposes to its workspace files. Read the change and its reason, then approve or
        deny it.
      </PageHeading>
      <StatusLine>
        {loaded.loading
          ? "Loading…"
          : status !== ""
            ? status
            : loaded.error === undefined
              ? `${pending.length} waiting for a decision, ${decided.length} decided.`
              : ""}
      </StatusLine>
      <ErrorText message={loaded.error} />
      <section aria-labelledby="pending-heading">
        <h2 id="pending-heading">Waiting for a decision</h2>
        {pending.length === 0 && !loaded.loading ? <p>Nothing is waiting.</p> : null}
        {pending.map((proposal) => (
          <ProposalCard
            key={proposal.name}
            proposal={proposal}
            onDecided={(next) => {
              replace(next);
              setStatus(`${next.artifactPath}: ${next.phase.toLowerCase()}.`);
            }}
          />
        ))}
      </section>
      {decided.length === 0 ? null : (
        <section aria-labelledby="decided-heading">
          <h2 id="decided-heading">Decided</h2>
          {decided.map((proposal) => (
            <ProposalCard key={proposal.name} proposal={proposal} />
          ))}
        </section>
      )}
    </>
  );
}

function ProposalCard({ proposal, onDecided }: { proposal: Proposal; onDecided?: (next: Proposal) => void }) {
  const headingId = useId();
  const commentId = useId();
  const [comment, setComment] = useState("");
  const [busy, setBusy] = useState<"approve" | "deny" | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const pending = proposal.phase === "Pending";

  const decide = async (decision: "approve" | "deny") => {
    setBusy(decision);
    setError(undefined);
    try {
      onDecided?.(await api.decide(proposal.name, decision, comment));
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setBusy(undefined);
    }
  };

  const body = (
    <>
      <p class="rationale">{proposal.rationale}</p>
      <DiffView diff={proposal.diff} label={proposal.artifactPath} />
    </>
  );
  return (
    <article aria-labelledby={headingId}>
      <header>
        <h3 id={headingId}>
          <code>{proposal.artifactPath}</code>
        </h3>
        <small>
          {proposal.phase}
          {proposal.proposedBy === undefined ? null : <> · proposed by {proposal.proposedBy}</>}
          {proposal.createdAt === undefined ? null : (
            <>
              {" "}
              · <Time iso={proposal.createdAt} />
            </>
          )}
        </small>
      </header>
      {pending ? (
        body
      ) : (
        <details>
          <summary>Change and reason</summary>
          {body}
        </details>
      )}
      {proposal.approval === undefined ? null : (
        <p>
          {proposal.approval.decision} by {proposal.approval.by}
          {proposal.approval.at === undefined ? null : (
            <>
              {" "}
              on <Time iso={proposal.approval.at} />
            </>
          )}
          {proposal.approval.comment ? <>: “{proposal.approval.comment}”</> : "."}
        </p>
      )}
      {proposal.promotion === undefined ? null : (
        <p>
          Committed to the workspace as <code>{proposal.promotion.commitId.slice(0, 12)}</code> on{" "}
          <Time iso={proposal.promotion.promotedAt} />.
        </p>
      )}
      {!pending || onDecided === undefined ? null : proposal.blocker !== undefined ? (
        <p class="blocker">
          <strong>You cannot decide this one:</strong> {proposal.blocker}
        </p>
      ) : (
        <form
          aria-label={`Decide on ${proposal.artifactPath}`}
          onSubmit={(event) => {
            event.preventDefault();
          }}
        >
          <label for={commentId}>Comment (optional)</label>
          <textarea
            id={commentId}
            rows={2}
            maxLength={1024}
            value={comment}
            onInput={(event) => setComment(event.currentTarget.value)}
          />
          <ErrorText message={error} />
          <div class="actions">
            <button
              type="button"
              disabled={busy !== undefined}
              aria-busy={busy === "approve" ? "true" : undefined}
              aria-describedby={headingId}
              onClick={() => void decide("approve")}
            >
              Approve
            </button>
            <button
              type="button"
              class="secondary"
              disabled={busy !== undefined}
              aria-busy={busy === "deny" ? "true" : undefined}
              aria-describedby={headingId}
              onClick={() => void decide("deny")}
            >
              Deny
            </button>
          </div>
        </form>
      )}
    </article>
  );
}
