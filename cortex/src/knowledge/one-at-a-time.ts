/** Runs `work` after every earlier call with the same key has settled (fulfilled or rejected). */
export type OneAtATime = <T>(key: string, work: () => Promise<T>) => Promise<T>;

/**
 * Work that must not overlap per key (one proposal's decisions, one page's proposals) runs one at a time, each
 * reading what the previous one left. In process is enough: Cortex is the only writer of these records, one
 * replica, replaced with Recreate. A key's entry goes once its last call settles, so the map holds only keys in use.
 */
export function oneAtATimePer(): OneAtATime {
  const tails = new Map<string, Promise<unknown>>();
  return <T>(key: string, work: () => Promise<T>): Promise<T> => {
    const previous = tails.get(key) ?? Promise.resolve();
    const run = previous.then(work, work);
    const tail = run.catch(() => undefined);
    tails.set(key, tail);
    void tail.then(() => {
      if (tails.get(key) === tail) tails.delete(key);
    });
    return run;
  };
}
