/** The dialogs of "My memory": correct one statement, forget one, forget everything after a typed confirmation. */
import { useId, useState } from "preact/hooks";
import { api } from "../api.js";
import { ErrorText } from "../components/basics.js";
import { Dialog } from "../components/Dialog.js";
import type { KnowledgeItem, Me } from "../types.js";

function useSubmit() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await work();
    } catch (failure) {
      setError((failure as Error).message);
      setBusy(false);
    }
  };
  return { busy, error, run };
}

export function CorrectDialog({
  item,
  onClose,
  onCorrected,
}: {
  item: KnowledgeItem;
  onClose: () => void;
  onCorrected: (created: KnowledgeItem["object"], at: string) => void;
}) {
  const [statement, setStatement] = useState(item.object.statement);
  const [reason, setReason] = useState("");
  const { busy, error, run } = useSubmit();
  const ids = { statement: useId() };
  const unchanged = statement.trim() === item.object.statement.trim() || statement.trim() === "";
  return (
    <Dialog title="Correct what the assistant remembers" onClose={onClose}>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void run(async () => {
            const answer = await api.correct(item.object.id, statement.trim(), reason);
            onCorrected(answer.created, new Date().toISOString());
          });
        }}
      >
        <p>
          It remembers: <q>{item.object.statement}</q>. The correction replaces it from now on; the old
          statement is kept, marked invalidated.
        </p>
        <label for={ids.statement}>Corrected statement</label>
        <textarea
          id={ids.statement}
          required
          maxLength={4000}
          rows={3}
          value={statement}
          onInput={(event) => setStatement(event.currentTarget.value)}
        />
        <ReasonField value={reason} onInput={setReason} />
        <ErrorText message={error} />
        <footer>
          <button type="button" class="secondary" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" disabled={busy || unchanged} aria-busy={busy ? "true" : undefined}>
            Save correction
          </button>
        </footer>
      </form>
    </Dialog>
  );
}

export function ForgetDialog({
  item,
  user,
  onClose,
  onForgotten,
}: {
  item: KnowledgeItem;
  user: string | undefined;
  onClose: () => void;
  onForgotten: (counts: unknown) => void;
}) {
  const [reason, setReason] = useState("");
  const { busy, error, run } = useSubmit();
  return (
    <Dialog title="Forget this?" onClose={onClose}>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void run(async () => onForgotten(await api.forget([item.object.id], reason, user)));
        }}
      >
        <p>
          <q>{item.object.statement}</q>
        </p>
        <p>
          The assistant will no longer know this{user === undefined ? "" : ` about ${user}`}. This cannot be
          undone.
        </p>
        <ReasonField value={reason} onInput={setReason} />
        <ErrorText message={error} />
        <footer>
          <button type="button" class="secondary" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" disabled={busy} aria-busy={busy ? "true" : undefined}>
            Forget
          </button>
        </footer>
      </form>
    </Dialog>
  );
}

export function ForgetAllDialog({
  me,
  onClose,
  onErased,
}: {
  me: Me;
  onClose: () => void;
  onErased: (counts: unknown) => void;
}) {
  const [typed, setTyped] = useState("");
  const [reason, setReason] = useState("");
  const { busy, error, run } = useSubmit();
  const ids = { confirm: useId(), help: useId() };
  const confirmed = typed.trim() === me.memberId;
  return (
    <Dialog title="Forget everything about you" onClose={onClose}>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (!confirmed) return;
          void run(async () => onErased(await api.forgetAll(typed.trim(), reason)));
        }}
      >
        <p>
          Everything the assistant learned about you, your archived conversations and your turns in shared
          ones are erased for good. It can take a few minutes.
        </p>
        <label for={ids.confirm}>Type your member id, {me.memberId}, to confirm</label>
        <input
          id={ids.confirm}
          autocomplete="off"
          spellcheck={false}
          aria-describedby={ids.help}
          value={typed}
          onInput={(event) => setTyped(event.currentTarget.value)}
        />
        <small id={ids.help}>The button below works once it matches.</small>
        <ReasonField value={reason} onInput={setReason} />
        <ErrorText message={error} />
        <footer>
          <button type="button" class="secondary" onClick={onClose}>
            Cancel
          </button>
          <button
            type="submit"
            class="contrast"
            disabled={busy || !confirmed}
            aria-busy={busy ? "true" : undefined}
          >
            Yes, forget everything
          </button>
        </footer>
      </form>
    </Dialog>
  );
}

/** Why the person asks (optional): Cortex keeps it, redacted, in its audit record. */
function ReasonField({ value, onInput }: { value: string; onInput: (reason: string) => void }) {
  const id = useId();
  return (
    <>
      <label for={id}>Why (optional)</label>
      <input id={id} maxLength={1024} value={value} onInput={(event) => onInput(event.currentTarget.value)} />
    </>
  );
}
