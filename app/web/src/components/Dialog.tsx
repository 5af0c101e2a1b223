/**
 * A modal <dialog>, shown while it is rendered: the browser keeps the focus inside it and Escape closes it; when it
 * goes, the focus returns to whatever opened it.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useId, useRef } from "preact/hooks";

export interface DialogProps {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
}

export function Dialog({ title, onClose, children }: DialogProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const opener = document.activeElement;
    const element = dialog.current;
    if (element !== null && !element.open) element.showModal();
    return () => {
      if (element?.open) element.close();
      if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
    };
  }, []);
  return (
    <dialog
      ref={dialog}
      aria-labelledby={titleId}
      onCancel={(event) => {
        // Escape: the owner decides (it unmounts the dialog); the browser would otherwise close it behind its back.
        event.preventDefault();
        onClose();
      }}
    >
      <article>
        <h2 id={titleId}>{title}</h2>
        {children}
      </article>
    </dialog>
  );
}
