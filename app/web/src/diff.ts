/**
 * A unified diff (an ArtifactProposal's spec.diff, as `git diff` writes it) split into lines a page can render:
 * each line knows what it is and, inside a hunk, its line numbers in the old and the new file.
 */

export type DiffLineKind = "file" | "hunk" | "add" | "del" | "context" | "note";

export interface DiffLine {
  kind: DiffLineKind;
  /** The line as written, its +, - or space marker included. */
  text: string;
  oldLine?: number;
  newLine?: number;
}

export interface ParsedDiff {
  lines: DiffLine[];
  additions: number;
  deletions: number;
}

const hunkHeader = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

export function parseUnifiedDiff(diff: string): ParsedDiff {
  const lines: DiffLine[] = [];
  const counted = { additions: 0, deletions: 0 };
  let oldLine = 0;
  let newLine = 0;
  // Lines of the current hunk still to come, from its header's counts: a body line starting with "---" stays a
  // deletion, and what follows the hunk is a header again.
  let oldLeft = 0;
  let newLeft = 0;
  let seenHunk = false;
  const body = (text: string) => {
    if (text.startsWith("+")) {
      counted.additions += 1;
      newLeft -= 1;
      lines.push({ kind: "add", text, newLine: newLine++ });
    } else if (text.startsWith("-")) {
      counted.deletions += 1;
      oldLeft -= 1;
      lines.push({ kind: "del", text, oldLine: oldLine++ });
    } else {
      oldLeft -= 1;
      newLeft -= 1;
      lines.push({ kind: "context", text, oldLine: oldLine++, newLine: newLine++ });
    }
  };
  const raw = diff.replace(/\r\n/g, "\n").split("\n");
  // A diff ends with a newline; the empty string after it is no line of the diff.
  if (raw.length > 0 && raw[raw.length - 1] === "") raw.pop();
  for (const text of raw) {
    const inHunk = oldLeft > 0 || newLeft > 0;
    const hunk = inHunk ? null : hunkHeader.exec(text);
    if (hunk !== null) {
      seenHunk = true;
      oldLine = Number(hunk[1]);
      oldLeft = hunk[2] === undefined ? 1 : Number(hunk[2]);
      newLine = Number(hunk[3]);
      newLeft = hunk[4] === undefined ? 1 : Number(hunk[4]);
      lines.push({ kind: "hunk", text });
    } else if (text.startsWith("\\")) {
      lines.push({ kind: "note", text });
    } else if (inHunk) {
      body(text);
    } else if (seenHunk && /^([+-](?![+-]{2} )| )/.test(text)) {
      // Past a hunk's counts yet still a body line: a diff whose header miscounted, read leniently.
      body(text);
    } else {
      lines.push({ kind: "file", text });
    }
  }
  return { lines, ...counted };
}

/** "3 added, 1 removed": what a diff changes, for a summary line. */
export function diffStat(parsed: ParsedDiff): string {
  return `${parsed.additions} added, ${parsed.deletions} removed`;
}
