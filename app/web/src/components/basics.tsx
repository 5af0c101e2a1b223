/** Small pieces every page uses: its heading, the live status line, an error, a time. */
import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";
import { formatDate, relativeTime } from "../format.js";

/** Whether a page heading was shown before: the first one, on loading the document, leaves the focus alone. */
let shownBefore = false;

/**
 * A page's one h1. It takes the focus when a later page opens (a link followed, signed in), so a screen reader
 * announces the new page and the keyboard starts from its top; the document's title follows it.
 */
export function PageHeading({ title, children }: { title: string; children?: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Remram`;
    if (shownBefore) heading.current?.focus();
    shownBefore = true;
  }, [title]);
  return (
    <hgroup>
      <h1 tabIndex={-1} ref={heading}>
        {title}
      </h1>
      {children === undefined ? null : <p>{children}</p>}
    </hgroup>
  );
}

/** A polite live region, present from the start so that what is written into it later is announced. */
export function StatusLine({ children }: { children?: ComponentChildren }) {
  return (
    <p role="status" aria-live="polite" class="status">
      {children}
    </p>
  );
}

/** The server's message of a failed request; announced at once. */
export function ErrorText({ message }: { message: string | undefined }) {
  if (message === undefined || message === "") return null;
  return (
    <p role="alert" class="error">
      {message}
    </p>
  );
}

/** A timestamp as the reader's locale writes it, its age in the tooltip. */
export function Time({ iso }: { iso: string | null | undefined }) {
  if (iso === undefined || iso === null || iso === "") return <span>unknown</span>;
  return (
    <time dateTime={iso} title={relativeTime(iso)}>
      {formatDate(iso)}
    </time>
  );
}
