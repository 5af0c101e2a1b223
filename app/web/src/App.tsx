/**
 * The frame of every page: who is signed in, the navigation, and the page the hash names. Until /api/me answers
 * nothing but a loading line shows; a 401 there, or from any later request, shows the sign-in page.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, api, onUnauthorized } from "./api.js";
import { ErrorText } from "./components/basics.js";
import { useRoute } from "./hooks.js";
import { Conversation } from "./pages/Conversation.js";
import { Conversations } from "./pages/Conversations.js";
import { Diagnostics } from "./pages/Diagnostics.js";
import { Memory } from "./pages/Memory.js";
import { NotFound } from "./pages/NotFound.js";
import { Proposals } from "./pages/Proposals.js";
import { SignIn } from "./pages/SignIn.js";
import { hrefOf, type PageName, type Route } from "./route.js";
import type { Me } from "./types.js";

const navigation: { page: PageName; label: string; adminOnly?: boolean }[] = [
  { page: "memory", label: "My memory" },
  { page: "conversations", label: "Conversations" },
  { page: "proposals", label: "Proposals" },
  { page: "diagnostics", label: "Diagnostics", adminOnly: true },
];

export function App() {
  const route = useRoute();
  /** undefined: still asking the server; null: signed out. */
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const [failure, setFailure] = useState<string | undefined>(undefined);
  const signedIn = useRef(false);
  const main = useRef<HTMLElement>(null);

  const enter = (person: Me | null) => {
    signedIn.current = person !== null;
    setMe(person);
  };

  useEffect(() => {
    onUnauthorized((message) => {
      if (signedIn.current) setNotice(`You were signed out: ${message}`);
      enter(null);
    });
    api.me().then(enter, (error: unknown) => {
      if (error instanceof ApiError && error.status === 401) enter(null);
      else setFailure((error as Error).message);
    });
  }, []);

  useEffect(() => {
    if (me && route.page === "sign-in") location.hash = hrefOf({ page: "memory" });
  }, [me, route.page]);

  const signOut = async () => {
    try {
      await api.signOut();
    } finally {
      setNotice("You are signed out.");
      enter(null);
    }
  };

  return (
    <>
      {/* A button, not a link to #main-content: the hash names pages here. */}
      <button type="button" class="skip-link" onClick={() => main.current?.focus()}>
        Skip to content
      </button>
      <header class="container">
        <nav aria-label="Main">
          <ul>
            <li>
              <strong>Remram</strong>
            </li>
          </ul>
          {me ? (
            <ul>
              {navigation
                .filter((item) => !item.adminOnly || me.admin)
                .map((item) => (
                  <li key={item.page}>
                    <a
                      href={hrefOf({ page: item.page })}
                      aria-current={route.page === item.page ? "page" : undefined}
                    >
                      {item.label}
                    </a>
                  </li>
                ))}
              <li>
                <button type="button" class="secondary outline" onClick={() => void signOut()}>
                  Sign out
                </button>
              </li>
            </ul>
          ) : null}
        </nav>
        {me ? (
          <p class="who">
            Signed in as <strong>{me.username}</strong> (member {me.memberId}
            {me.admin ? ", household admin" : ""})
          </p>
        ) : null}
      </header>
      <main id="main-content" class="container" tabIndex={-1} ref={main}>
        {me === undefined ? (
          failure === undefined ? (
            <p aria-busy="true">Loading…</p>
          ) : (
            <ErrorText message={failure} />
          )
        ) : me === null ? (
          <SignIn
            notice={notice}
            onSignedIn={(person) => {
              setNotice(undefined);
              enter(person);
            }}
          />
        ) : (
          <Page route={route} me={me} />
        )}
      </main>
    </>
  );
}

function Page({ route, me }: { route: Route; me: Me }) {
  switch (route.page) {
    case "memory":
    case "sign-in":
      return <Memory me={me} />;
    case "conversations":
      return route.id === undefined ? <Conversations /> : <Conversation hash={route.id} me={me} />;
    case "proposals":
      return <Proposals />;
    case "diagnostics":
      return <Diagnostics />;
    case "not-found":
      return <NotFound />;
  }
}
