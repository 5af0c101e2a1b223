// A CortexWatch with a clock the test moves and a Cortex it answers for (queued answers; none left: Cortex is
// unavailable). Test support only.
import pino from "pino";
import { CortexWatch } from "../cortex-watch.js";

export function watchHarness<A, S>(toStatus: (answer: A) => S, pollMs: (status: S | undefined) => number) {
  let now = Date.parse("2026-11-28T10:00:00Z");
  const answers: A[] = [];
  const settled: string[] = [];
  let asked = 0;
  const watch = new CortexWatch<S>({
    read: async () => {
      asked += 1;
      const answer = answers.shift();
      if (answer === undefined) throw new Error("Cortex unavailable");
      return toStatus(answer);
    },
    what: "a Cortex status",
    now: () => now,
    settled: (key) => settled.push(key),
    log: pino({ level: "silent" }),
  });
  return {
    observe: (previous: S | undefined, available = true) =>
      watch.observe("ns", "home", previous, pollMs, available),
    answers,
    settled,
    asked: () => asked,
    /** Lets a started read settle. */
    flush: () => new Promise((resolve) => setImmediate(resolve)),
    advance: (ms: number) => {
      now += ms;
    },
  };
}
