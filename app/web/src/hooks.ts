/** The few hooks the pages share: the current route, and loading one answer of the API. */
import { useCallback, useEffect, useState } from "preact/hooks";
import { parseHash, type Route } from "./route.js";

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const follow = () => setRoute(parseHash(location.hash));
    addEventListener("hashchange", follow);
    return () => removeEventListener("hashchange", follow);
  }, []);
  return route;
}

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload: () => void;
  /** Replace what was loaded (after a change the server confirmed). */
  setData: (update: (data: T | undefined) => T | undefined) => void;
}

/** Calls `load` now and whenever a key changes; an answer that arrives after a newer call started is dropped. */
export function useLoad<T>(load: () => Promise<T>, keys: readonly unknown[]): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    setLoading(true);
    setError(undefined);
    load().then(
      (answer) => {
        if (!current) return;
        setData(answer);
        setLoading(false);
      },
      (failure: unknown) => {
        if (!current) return;
        setError(failure instanceof Error ? failure.message : String(failure));
        setLoading(false);
      },
    );
    return () => {
      current = false;
    };
  }, [...keys, round]);
  const reload = useCallback(() => setRound((value) => value + 1), []);
  return { data, error, loading, reload, setData };
}
