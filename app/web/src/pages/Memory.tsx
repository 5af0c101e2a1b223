/**
 * "My memory": what the assistant remembers about the person and their household, searched and filtered; a
 * statement corrected (the old one stays, invalidated) or forgotten; everything forgotten after a typed confirmation.
 * An admin may look at another member's memory and forget from it.
 */
import { useEffect, useId, useMemo, useState } from "preact/hooks";
import { api } from "../api.js";
import { ErrorText, PageHeading, StatusLine } from "../components/basics.js";
import { KnowledgeCard, knowledgeHeadingId } from "../components/KnowledgeCard.js";
import { countEntries, countsSentence, humanize } from "../format.js";
import type { KnowledgeItem, KnowledgeQuery, KnowledgeScope, LifecycleStatus, Me } from "../types.js";
import { CorrectDialog, ForgetAllDialog, ForgetDialog } from "./MemoryDialogs.js";

const pageSize = 50;
const statusChoices: [LifecycleStatus, string][] = [
  ["active", "Active"],
  ["demoted", "Demoted"],
  ["invalidated", "Invalidated"],
];
const scopeChoices: [KnowledgeScope, string][] = [
  ["user", "About me"],
  ["household", "About my household"],
];

/** Once the page has rendered, move the focus to the element with this id (or the page's h1 when it is gone). */
function focusSoon(id: string | undefined) {
  requestAnimationFrame(() => {
    const target = (id === undefined ? null : document.getElementById(id)) ?? document.querySelector("h1");
    if (target instanceof HTMLElement) target.focus();
  });
}

function toggled<T>(list: readonly T[], value: T, on: boolean): T[] {
  return on ? [...new Set([...list, value])] : list.filter((item) => item !== value);
}

export function Memory({ me }: { me: Me }) {
  const [q, setQ] = useState("");
  const [statuses, setStatuses] = useState<LifecycleStatus[]>(["active"]);
  const [scopes, setScopes] = useState<KnowledgeScope[]>(["user", "household"]);
  const [user, setUser] = useState("");
  const [query, setQuery] = useState<KnowledgeQuery>({ status: ["active"], scope: ["user", "household"] });
  const [items, setItems] = useState<KnowledgeItem[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [total, setTotal] = useState<number | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | undefined>(undefined);
  const [status, setStatus] = useState("");
  const [correcting, setCorrecting] = useState<KnowledgeItem | undefined>(undefined);
  const [forgetting, setForgetting] = useState<KnowledgeItem | undefined>(undefined);
  const [forgettingAll, setForgettingAll] = useState(false);
  const [erased, setErased] = useState<[string, number][] | undefined>(undefined);
  const ids = { q: useId(), user: useId() };

  const other =
    query.user !== undefined && query.user !== "" && query.user !== me.memberId ? query.user : undefined;

  const load = async (next: KnowledgeQuery, append: boolean) => {
    setLoading(true);
    setError(undefined);
    try {
      const page = await api.knowledge({ ...next, limit: pageSize });
      setItems((current) => (append ? [...current, ...page.items] : page.items));
      setCursor(page.nextCursor ?? null);
      setTotal(page.total);
      const shown = (append ? items.length : 0) + page.items.length;
      setStatus(
        shown === 0
          ? "Nothing found."
          : `Showing ${shown}${page.total === undefined ? "" : ` of ${page.total}`} item${shown === 1 ? "" : "s"}${next.user ? ` of ${next.user}` : ""}.`,
      );
    } catch (failure) {
      setError((failure as Error).message);
      setStatus("");
    } finally {
      setLoading(false);
    }
  };

  // A new search is the only reason to load from the start (load itself changes every render).
  useEffect(() => {
    void load(query, false);
  }, [query]);

  const statements = useMemo(
    () => new Map(items.map((item) => [item.object.id, item.object.statement])),
    [items],
  );

  const search = (event: Event) => {
    event.preventDefault();
    setErased(undefined);
    setQuery({
      q: q.trim() === "" ? undefined : q.trim(),
      status: statuses,
      scope: scopes,
      ...(me.admin && user.trim() !== "" ? { user: user.trim() } : {}),
    });
  };

  return (
    <>
      <PageHeading title="My memory">What the assistant remembers about you and your household.</PageHeading>
      <search aria-label="Search memory">
        <form onSubmit={search}>
          <label for={ids.q}>Search</label>
          <input
            id={ids.q}
            type="search"
            name="q"
            placeholder="e.g. allergies, school, birthday"
            value={q}
            onInput={(event) => setQ(event.currentTarget.value)}
          />
          <div class="filters">
            <fieldset>
              <legend>Status</legend>
              {statusChoices.map(([value, label]) => (
                <label key={value}>
                  <input
                    type="checkbox"
                    name="status"
                    value={value}
                    checked={statuses.includes(value)}
                    onChange={(event) => setStatuses(toggled(statuses, value, event.currentTarget.checked))}
                  />
                  {label}
                </label>
              ))}
            </fieldset>
            <fieldset>
              <legend>Whose</legend>
              {scopeChoices.map(([value, label]) => (
                <label key={value}>
                  <input
                    type="checkbox"
                    name="scope"
                    value={value}
                    checked={scopes.includes(value)}
                    onChange={(event) => setScopes(toggled(scopes, value, event.currentTarget.checked))}
                  />
                  {label}
                </label>
              ))}
            </fieldset>
          </div>
          {me.admin ? (
            <>
              <label for={ids.user}>Member (admins: another member's memory; empty for yours)</label>
              <input
                id={ids.user}
                name="user"
                autocomplete="off"
                placeholder={me.memberId}
                value={user}
                onInput={(event) => setUser(event.currentTarget.value)}
              />
            </>
          ) : null}
          <button type="submit" disabled={statuses.length === 0 || scopes.length === 0}>
            Search
          </button>
        </form>
      </search>

      <StatusLine>{loading ? "Loading…" : status}</StatusLine>
      <ErrorText message={error} />
      {erased === undefined ? null : <ErasureSummary counts={erased} />}

      <section aria-label="Remembered items" aria-busy={loading ? "true" : undefined}>
        {items.map((item) => (
          <KnowledgeCard
            key={item.object.id}
            item={item}
            statements={statements}
            {...(other === undefined ? { onCorrect: setCorrecting } : {})}
            {...(item.mine !== false || other !== undefined || me.admin ? { onForget: setForgetting } : {})}
          />
        ))}
        {cursor === null ? null : (
          <button
            type="button"
            class="secondary"
            disabled={loading}
            onClick={() => void load({ ...query, cursor }, true)}
          >
            Load more{total === undefined ? "" : ` (${total - items.length} left)`}
          </button>
        )}
      </section>

      {other === undefined ? (
        <section class="danger-zone" aria-labelledby="forget-all-heading">
          <h2 id="forget-all-heading">Forget everything</h2>
          <p>
            Erase everything the assistant knows about you: what it learned, your archived conversations, and
            your part of shared ones. This cannot be undone.
          </p>
          <button type="button" class="contrast" onClick={() => setForgettingAll(true)}>
            Forget everything…
          </button>
        </section>
      ) : null}

      {correcting === undefined ? null : (
        <CorrectDialog
          item={correcting}
          onClose={() => setCorrecting(undefined)}
          onCorrected={(created, at) => {
            const oldId = correcting.object.id;
            setItems((current) =>
              current.flatMap((item) =>
                item.object.id === oldId
                  ? [
                      { object: created, mine: created.scope === "user" },
                      {
                        ...item,
                        object: {
                          ...item.object,
                          status: "invalidated",
                          validity: { ...item.object.validity, invalidAt: at },
                          links: [
                            ...(item.object.links ?? []),
                            { rel: "supersededBy", targetId: created.id },
                          ],
                        },
                        contradictedBy: [
                          ...(item.contradictedBy ?? []),
                          { id: created.id, statement: created.statement },
                        ],
                      },
                    ]
                  : [item],
              ),
            );
            setCorrecting(undefined);
            setStatus("Corrected. The earlier statement is kept, marked invalidated.");
            focusSoon(knowledgeHeadingId(created.id));
          }}
        />
      )}
      {forgetting === undefined ? null : (
        <ForgetDialog
          item={forgetting}
          user={other}
          onClose={() => setForgetting(undefined)}
          onForgotten={(counts) => {
            const gone = forgetting.object.id;
            const index = items.findIndex((item) => item.object.id === gone);
            const neighbour = items[index + 1] ?? items[index - 1];
            setItems((current) => current.filter((item) => item.object.id !== gone));
            setTotal((value) => (value === undefined ? value : Math.max(0, value - 1)));
            setForgetting(undefined);
            const detail = countsSentence(counts);
            setStatus(`The assistant no longer knows that${detail === "" ? "" : ` (${detail})`}.`);
            focusSoon(neighbour === undefined ? undefined : knowledgeHeadingId(neighbour.object.id));
          }}
        />
      )}
      {forgettingAll ? (
        <ForgetAllDialog
          me={me}
          onClose={() => setForgettingAll(false)}
          onErased={(counts) => {
            setItems([]);
            setCursor(null);
            setTotal(0);
            setForgettingAll(false);
            setErased(countEntries(counts));
            setStatus("Everything the assistant knew about you is forgotten.");
            focusSoon("erased-heading");
          }}
        />
      ) : null}
    </>
  );
}

function ErasureSummary({ counts }: { counts: [string, number][] }) {
  const shown = counts.filter(([key]) => !/ms$/i.test(key));
  return (
    <section aria-labelledby="erased-heading">
      <h2 id="erased-heading" tabIndex={-1}>
        What was erased
      </h2>
      <table>
        <thead>
          <tr>
            <th scope="col">What</th>
            <th scope="col">Count</th>
          </tr>
        </thead>
        <tbody>
          {shown.map(([key, value]) => (
            <tr key={key}>
              <th scope="row">{humanize(key)}</th>
              <td>{value}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
