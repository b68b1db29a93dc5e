import { openBroker } from "../engine/open.js";
import type { SqliteBroker } from "../engine/sqlite-broker.js";
import { isMemoryPath, normalizePath } from "../store/database.js";

interface Entry {
  broker: Promise<SqliteBroker>;
  refs: number;
}

const open = new Map<string, Entry>();

/**
 * One embedded broker per file per process: every `Queue` on the same `dbPath` shares it, so a
 * producer's enqueue wakes a worker's long-poll in-process (no polling) and one connection serves
 * all. `:memory:` is never shared (each opener gets its own database).
 */
export function acquireBroker(path: string): { broker: Promise<SqliteBroker>; release: () => Promise<void> } {
  if (isMemoryPath(path)) {
    const broker = openBroker(path);
    return { broker, release: async () => (await broker).close() };
  }
  const key = normalizePath(path);
  let entry = open.get(key);
  if (!entry) {
    entry = { broker: openBroker(path), refs: 0 };
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
