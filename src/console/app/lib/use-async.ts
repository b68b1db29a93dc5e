import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { live } from "./live.js";
import { useStore } from "./store.js";

export interface Async<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload: () => Promise<void>;
}

/**
 * Loads `fn()` when `deps` change, and again after the live feed reconnects (so a page that failed
 * during an outage recovers); `reload()` loads again. Stale answers are dropped.
 */
export function useAsync<T>(fn: () => Promise<T>, deps: unknown[]): Async<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const generation = useRef(0);
  const fnRef = useRef(fn);
  fnRef.current = fn;
  const reload = useCallback(async () => {
    const mine = ++generation.current;
    setLoading(true);
    try {
      const value = await fnRef.current();
      if (mine === generation.current) {
        setData(value);
        setError(undefined);
      }
    } catch (err) {
      if (mine === generation.current) setError((err as Error).message);
    } finally {
      if (mine === generation.current) setLoading(false);
    }
  }, []);
  useEffect(() => {
    void reload();
  }, deps);
  const epoch = useReconnects();
  const seenEpoch = useRef(epoch);
  useEffect(() => {
    const before = seenEpoch.current;
    seenEpoch.current = epoch;
    // The first connection of the page is not a recovery: what was just loaded stays.
    if (epoch !== before && before > 0) void reload();
  }, [epoch]);
  return { data, error, loading, reload };
}

/** The live feed's connection count: it moves when the feed (re)connects. */
export function useReconnects(): number {
  return useStore(live).epoch;
}
