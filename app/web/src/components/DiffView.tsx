/**
 * A unified diff as lines: removed lines in <del>, added ones in <ins> (announced as such by screen readers), the
 * +/- markers kept, so nothing depends on colour alone; line numbers in a gutter that assistive technology skips.
 */
import { useMemo } from "preact/hooks";
import { diffStat, parseUnifiedDiff } from "../diff.js";

export function DiffView({ diff, label }: { diff: string; label: string }) {
  const parsed = useMemo(() => parseUnifiedDiff(diff), [diff]);
  if (parsed.lines.length === 0) return <p>The proposal carries no diff.</p>;
  return (
    <figure class="diff">
      <figcaption>
        {label}: {diffStat(parsed)}
      </figcaption>
      <pre>
        <code>
          {parsed.lines.map((line, index) => {
            const gutter = (
              <span class="gutter" aria-hidden="true">
                <span>{line.oldLine ?? ""}</span>
                <span>{line.newLine ?? ""}</span>
              </span>
            );
            const key = `${index}`;
            if (line.kind === "add")
              return (
                <ins key={key} class="line">
                  {gutter}
                  {line.text}
                </ins>
              );
            if (line.kind === "del")
              return (
                <del key={key} class="line">
                  {gutter}
                  {line.text}
                </del>
              );
            return (
              <span key={key} class={`line ${line.kind}`}>
                {gutter}
                {line.text}
              </span>
            );
          })}
        </code>
      </pre>
    </figure>
  );
}
