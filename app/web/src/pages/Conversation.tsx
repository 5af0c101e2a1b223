/** One archived conversation in full (#/conversations/<hash>); the server refuses (403) where consent does not allow. */
import { api } from "../api.js";
import { ErrorText, PageHeading, StatusLine, Time } from "../components/basics.js";
import { humanize, shortId } from "../format.js";
import { useLoad } from "../hooks.js";
import type { Me } from "../types.js";

function speaker(role: string, authorId: string | undefined, me: Me): string {
  if (role === "user") return authorId === undefined || authorId === me.memberId ? "You" : authorId;
  if (role === "assistant") return "Assistant";
  return humanize(role);
}

export function Conversation({ hash, me }: { hash: string; me: Me }) {
  const loaded = useLoad(() => api.transcript(hash), [hash]);
  const archived = loaded.data?.document;
  return (
    <>
      <p>
        <a href="#/conversations">← Back to conversations</a>
      </p>
      <PageHeading title="Conversation">
        {archived?.createdAt === undefined ? (
          <>Archived conversation {shortId(hash)}</>
        ) : (
          <>
            <Time iso={archived.createdAt} />
            {archived.source?.channel === undefined ? null : <> on {humanize(archived.source.channel)}</>}
          </>
        )}
      </PageHeading>
      <StatusLine>
        {loaded.loading ? "Loading…" : archived === undefined ? "" : `${archived.messages.length} messages.`}
      </StatusLine>
      <ErrorText message={loaded.error} />
      {archived === undefined ? null : (
        <ol class="transcript" aria-label="Messages">
          {archived.messages.map((message, index) => (
            <li key={message.turnId ?? `${index}`} class={`message ${message.role}`}>
              <p class="speaker">
                <strong>{speaker(message.role, message.authorId, me)}</strong>
                {message.at === undefined ? null : (
                  <>
                    {" "}
                    <small>
                      <Time iso={message.at} />
                    </small>
                  </>
                )}
              </p>
              <p class="content">{message.content}</p>
            </li>
          ))}
        </ol>
      )}
      {archived?.attachments === undefined || archived.attachments.length === 0 ? null : (
        <section aria-labelledby="attachments-heading">
          <h2 id="attachments-heading">Attachments</h2>
          <ul>
            {archived.attachments.map((attachment) => (
              <li key={attachment.digest}>
                {attachment.name} <small>({attachment.mediaType})</small>
              </li>
            ))}
          </ul>
        </section>
      )}
    </>
  );
}
