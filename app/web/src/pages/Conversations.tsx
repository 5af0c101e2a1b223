/** Archived conversations as their summaries, searched; each opens in full where its consent allows. */
import { useId, useState } from "preact/hooks";
import { api } from "../api.js";
import { ErrorText, PageHeading, StatusLine, Time } from "../components/basics.js";
import { humanize } from "../format.js";
import { useLoad } from "../hooks.js";
import { hrefOf } from "../route.js";
import type { ArchiveHit } from "../types.js";

const step = 20;

export function Conversations() {
  const [text, setText] = useState("");
  const [query, setQuery] = useState<string | undefined>(undefined);
  const [limit, setLimit] = useState(step);
  const searchId = useId();
  const found = useLoad(() => api.searchTranscripts(query, limit), [query, limit]);
  const results = found.data?.results ?? [];

  return (
    <>
      <PageHeading title="Conversations">
        Your archived conversations with the assistant, summarised. Open one to read it in full where its
        consent allows.
      </PageHeading>
      <search aria-label="Search conversations">
        <form
          onSubmit={(event) => {
            event.preventDefault();
            setLimit(step);
            setQuery(text.trim() === "" ? undefined : text.trim());
          }}
        >
          <label for={searchId}>Search conversations</label>
          {/* biome-ignore lint/a11y/noRedundantRoles: Pico CSS joins an input and its button in [role=group]. */}
          <fieldset role="group">
            <input
              id={searchId}
              type="search"
              name="query"
              placeholder="e.g. holiday plans"
              value={text}
              onInput={(event) => setText(event.currentTarget.value)}
            />
            <button type="submit">Search</button>
          </fieldset>
        </form>
      </search>
      <StatusLine>
        {found.loading
          ? "Loading…"
          : found.error === undefined
            ? results.length === 0
              ? "No archived conversation found."
              : `${results.length} conversation${results.length === 1 ? "" : "s"}${query === undefined ? "" : ` for “${query}”`}.`
            : ""}
      </StatusLine>
      <ErrorText message={found.error} />
      <section aria-label="Archived conversations" aria-busy={found.loading ? "true" : undefined}>
        {results.map((hit) => (
          <Summary key={hit.hash} hit={hit} />
        ))}
      </section>
      {results.length >= limit && limit < 100 ? (
        <button
          type="button"
          class="secondary"
          disabled={found.loading}
          onClick={() => setLimit(Math.min(100, limit + step))}
        >
          Show more
        </button>
      ) : null}
    </>
  );
}

function Summary({ hit }: { hit: ArchiveHit }) {
  const headingId = useId();
  const recall = hit.consent?.allowRecall !== false;
  return (
    <article aria-labelledby={headingId}>
      <header>
        <h2 id={headingId} class="summary-heading">
          <Time iso={hit.createdAt} />
          {hit.sourceChannel === undefined ? null : <> · {humanize(hit.sourceChannel)}</>}
        </h2>
      </header>
      <p class="summary">{hit.summary}</p>
      <footer>
        {recall ? (
          <a href={hrefOf({ page: "conversations", id: hit.hash })} aria-describedby={headingId}>
            Read the whole conversation
          </a>
        ) : (
          <small>
            Only this summary is kept: the conversation's consent does not allow reading it in full.
          </small>
        )}
        {hit.consent?.privacy === undefined ? null : (
          <small class="privacy"> Privacy: {humanize(hit.consent.privacy)}.</small>
        )}
      </footer>
    </article>
  );
}
