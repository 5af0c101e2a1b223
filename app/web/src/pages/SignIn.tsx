/** Signing in with the token `kubectl remram user add` printed; the server keeps it in an HttpOnly cookie. */
import { useState } from "preact/hooks";
import { api } from "../api.js";
import { ErrorText, PageHeading } from "../components/basics.js";
import type { Me } from "../types.js";

export function SignIn({
  onSignedIn,
  notice,
}: {
  onSignedIn: (me: Me) => void;
  notice?: string | undefined;
}) {
  const [token, setToken] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const me = await api.signIn(token.trim());
      setToken("");
      onSignedIn(me);
    } catch (failure) {
      setError((failure as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <article class="sign-in">
      <PageHeading title="Sign in">
        What the household assistant remembers about you, in your hands.
      </PageHeading>
      {notice === undefined ? null : <p role="status">{notice}</p>}
      <form onSubmit={submit}>
        <label for="token">Your token</label>
        <input
          id="token"
          name="token"
          type="password"
          autocomplete="off"
          spellcheck={false}
          required
          aria-describedby="token-help"
          aria-invalid={error === undefined ? undefined : "true"}
          value={token}
          onInput={(event) => setToken(event.currentTarget.value)}
        />
        <small id="token-help">
          The token that <code>kubectl remram user add MEMBER</code> printed for you. Ask your household's
          admin if you have none. It is kept in a cookie that this page's scripts cannot read, for at most 12
          hours.
        </small>
        <ErrorText message={error} />
        <button type="submit" aria-busy={busy ? "true" : undefined} disabled={busy || token.trim() === ""}>
          Sign in
        </button>
      </form>
    </article>
  );
}
