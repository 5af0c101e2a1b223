/**
 * One thing the assistant remembers: the statement as the article's name, then what it is, how sure, when and
 * from where it came, its dimensions and links, and what contradicted it. An invalidated statement stays readable,
 * struck through and labelled, never replaced.
 */
import { humanize, percent, shortId } from "../format.js";
import type { KnowledgeItem } from "../types.js";
import { Time } from "./basics.js";

export interface KnowledgeCardProps {
  item: KnowledgeItem;
  /** Statements of the other loaded items, to name a link's target. */
  statements: ReadonlyMap<string, string>;
  onCorrect?: (item: KnowledgeItem) => void;
  onForget?: (item: KnowledgeItem) => void;
}

const relations: Record<string, string> = {
  related: "Related to",
  conflicts: "Conflicts with",
  supersedes: "Replaces",
  supersededBy: "Replaced by",
  evidence: "Evidence",
  evidenceFor: "Evidence for",
  refines: "Refines",
  refinedBy: "Refined by",
};

const sources: Record<string, string> = {
  user: "what you said",
  tool: "a tool's result",
  reflection: "reflection on a conversation",
  dream: "the assistant's dreaming",
  transcript: "an archived conversation",
  artifact: "a workspace file",
  import: "an import",
};

/** The id of an item's heading, which the page focuses after a change removes the button that had the focus. */
export function knowledgeHeadingId(objectId: string): string {
  return `knowledge-${objectId}`;
}

export function KnowledgeCard({ item, statements, onCorrect, onForget }: KnowledgeCardProps) {
  const { object, contradictedBy = [] } = item;
  const headingId = knowledgeHeadingId(object.id);
  const status = object.status ?? "active";
  const invalidated = status === "invalidated";
  const provenance = object.provenance ?? {};
  const dimensions = Object.entries(object.dimensions ?? {}).filter(([, values]) => values.length > 0);
  // A conflicts or supersededBy link is listed once, with its statement, under "Contradicted or replaced by".
  const named = new Set(contradictedBy.map((other) => other.id));
  const links = (object.links ?? []).filter(
    (link) => !((link.rel === "conflicts" || link.rel === "supersededBy") && named.has(link.targetId)),
  );
  return (
    <article aria-labelledby={headingId} class={`knowledge ${status}`}>
      <header>
        <h2 id={headingId} class="statement" tabIndex={-1}>
          {invalidated ? <del>{object.statement}</del> : object.statement}
        </h2>
        <p class="badges">
          <span class="badge">{humanize(object.type ?? "knowledge")}</span>
          <span class={`badge status-${status}`}>{humanize(status)}</span>
          <span class="badge">
            {object.scope === "household" ? "Household" : item.mine === false ? "Another member's" : "Yours"}
          </span>
          {object.userDirective ? <span class="badge">You asked to keep it</span> : null}
        </p>
      </header>
      <dl>
        <dt>Confidence</dt>
        <dd>
          {percent(object.confidence)}
          {object.reinforcementCount
            ? `, confirmed ${object.reinforcementCount} more time${object.reinforcementCount === 1 ? "" : "s"}`
            : ""}
        </dd>
        <dt>Learned</dt>
        <dd>
          <Time iso={provenance.observedAt ?? object.createdAt} />
          {provenance.source === undefined ? null : (
            <>, from {sources[provenance.source] ?? provenance.source}</>
          )}
          {provenance.channel === undefined ? null : <> on {provenance.channel}</>}
        </dd>
        {provenance.sessionId === undefined ? null : (
          <>
            <dt>Conversation</dt>
            <dd>
              <code title={provenance.sessionId}>{shortId(provenance.sessionId, 24)}</code>
            </dd>
          </>
        )}
        {invalidated || object.validity?.invalidAt ? (
          <>
            <dt>No longer true since</dt>
            <dd>
              <Time iso={object.validity?.invalidAt ?? object.updatedAt} />
            </dd>
          </>
        ) : null}
        {dimensions.length === 0 ? null : (
          <>
            <dt>About</dt>
            <dd>
              {dimensions.map(([name, values]) => (
                <span key={name} class="dimension">
                  {humanize(name)}: {values.join(", ")}
                </span>
              ))}
            </dd>
          </>
        )}
        {links.length === 0 ? null : (
          <>
            <dt>Links</dt>
            <dd>
              <ul>
                {links.map((link) => (
                  <li key={`${link.rel}:${link.targetId}`}>
                    {relations[link.rel] ?? humanize(link.rel)}:{" "}
                    {statements.get(link.targetId) ?? (
                      <code title={link.targetId}>{shortId(link.targetId, 16)}</code>
                    )}
                  </li>
                ))}
              </ul>
            </dd>
          </>
        )}
        {contradictedBy.length === 0 ? null : (
          <>
            <dt>Contradicted or replaced by</dt>
            <dd>
              <ul>
                {contradictedBy.map((other) => (
                  <li key={other.id}>
                    {other.statement ?? statements.get(other.id) ?? (
                      <code title={other.id}>{shortId(other.id, 16)}</code>
                    )}
                  </li>
                ))}
              </ul>
            </dd>
          </>
        )}
      </dl>
      {onCorrect === undefined && onForget === undefined ? null : (
        <footer>
          <div class="actions">
            {onCorrect === undefined || status !== "active" ? null : (
              <button
                type="button"
                class="secondary"
                aria-describedby={headingId}
                onClick={() => onCorrect(item)}
              >
                Correct
              </button>
            )}
            {onForget === undefined ? null : (
              <button
                type="button"
                class="secondary outline"
                aria-describedby={headingId}
                onClick={() => onForget(item)}
              >
                Forget
              </button>
            )}
          </div>
        </footer>
      )}
    </article>
  );
}
