import type { Broker } from "./contract/broker.js";
import { isPostgresDsn, type OpenOptions, openBroker } from "./open.js";
import { isMemoryPath, normalizePath } from "./store/sqlite/database.js";

interface Entry {
  broker: Promise<Broker>;
  refs: number;
}

const open = new Map<string, Entry>();

/**
 * One broker per location per process: every `Queue` on the same SQLite file (or the same
 * PostgreSQL database and schema) shares it, so a producer's enqueue wakes a worker's long-poll
 * in-process (no polling) and one connection (pool) serves all. `:memory:` is never shared (each
 * opener gets its own database). The engine is picked by location, as `openBroker` does.
 */
export function acquireBroker(
  location: string,
  options: OpenOptions = {},
): { broker: Promise<Broker>; release: () => Promise<void> } {
  if (isMemoryPath(location)) {
    const broker = openBroker(location, options);
    return { broker, release: async () => (await broker).close() };
  }
  const key = isPostgresDsn(location) ? `${location}#${options.schema ?? ""}` : normalizePath(location);
  let entry = open.get(key);
  if (!entry) {
    entry = { broker: openBroker(location, options), refs: 0 };
    open.set(key, entry);
    entry.broker.catch(() => open.delete(key));
  }
  entry.refs++;
  const mine = entry;
  let released = false;
  return {
    broker: mine.broker,
    release: async () => {
      if (released) return;
      released = true;
      mine.refs--;
      if (mine.refs > 0) return;
      open.delete(key);
      await (await mine.broker).close();
    },
  };
}
