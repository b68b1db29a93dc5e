import type { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import type { Broker } from "../contract/broker.js";
import type { QueueStats } from "../contract/types.js";
import type { ConsoleSnapshot, QueueSnapshot, SnapshotTotals } from "../wire/console-events.js";
import { statsToWire } from "../wire/results.js";
import type { ServerEnv, ServerState } from "./env.js";

/** The path of the console's live feed. */
export const EVENTS_PATH = "/ui-api/events";
/** Snapshots are taken this often while someone listens. */
export const SNAPSHOT_INTERVAL_MS = 1000;
/** Totals kept for a page that connects later (5 minutes at one a second). */
const HISTORY = 300;

/**
 * The share of the broker's time the feed's Stats reads of one queue may take. Stats counts a
 * queue's index entries, so it grows with the queue (about 50 ms at a million messages); a queue
 * whose read costs more than this share of a second is read less often, and its counts are shown
 * from the last read meanwhile (the send and complete counters stay live).
 */
const STATS_TIME_SHARE = 0.05;

/** Reads each queue's Stats at most as often as its cost allows (see STATS_TIME_SHARE). */
export class StatsReader {
  private readonly last = new Map<string, { stats: QueueStats; at: number; costMs: number }>();

  constructor(
    private readonly broker: Broker,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  async read(queue: string): Promise<QueueStats> {
    const now = this.clock();
    const prev = this.last.get(queue);
    if (prev && now - prev.at < prev.costMs / STATS_TIME_SHARE) return prev.stats;
    const stats = await this.broker.stats(queue);
    this.last.set(queue, { stats, at: now, costMs: this.clock() - now });
    return stats;
  }

  /** Forgets queues that are gone. */
  keepOnly(queues: ReadonlySet<string>): void {
    for (const name of this.last.keys()) if (!queues.has(name)) this.last.delete(name);
  }
}

interface Counting {
  sentCount?(queue: string): number;
  completedCount?(queue: string): number;
}

/** Builds one snapshot: a listing, one stats read per queue, the subscriptions and the status. */
export async function takeSnapshot(
  broker: Broker,
  now: () => number = Date.now,
  stats: StatsReader = new StatsReader(broker),
): Promise<ConsoleSnapshot> {
  const counting = broker as Broker & Counting;
  const counters = typeof counting.sentCount === "function" && typeof counting.completedCount === "function";
  const [infos, subs, status] = await Promise.all([
    broker.listQueues(),
    broker.listSubscriptions(),
    broker.status(),
  ]);
  const queues: QueueSnapshot[] = [];
  const totals: SnapshotTotals = {
    at_ms: now(),
    sent_total: 0,
    completed_total: 0,
    backlog: 0,
    dead_lettered: 0,
  };
  for (const q of infos) {
    let s: Awaited<ReturnType<Broker["stats"]>>;
    try {
      s = await stats.read(q.name);
    } catch {
      continue; // deleted since the listing
    }
    const { queue: _name, ...counts } = statsToWire(s);
    const row: QueueSnapshot = { name: q.name, kind: q.kind, ...(q.paused && { paused: true }), ...counts };
    if (counters) {
      row.sent_total = counting.sentCount!(q.name);
      row.completed_total = counting.completedCount!(q.name);
      totals.sent_total += row.sent_total;
      totals.completed_total += row.completed_total;
    }
    totals.backlog += s.active + s.locked + s.deferred + s.scheduled;
    totals.dead_lettered += s.deadLettered;
    queues.push(row);
  }
  stats.keepOnly(new Set(infos.map((q) => q.name)));
  return {
    at_ms: totals.at_ms,
    uptime_ms: status.uptimeMs,
    db_size_bytes: status.dbSizeBytes,
    counters,
    queues,
    subscriptions: subs.map((s) => ({
      topic: s.topic,
      name: s.name,
      kind: s.kind,
      paused: s.paused,
      ...(s.filter && { expr: s.filter }),
    })),
    totals,
  };
}

type Listener = (snapshot: ConsoleSnapshot) => void;

/**
 * Takes one snapshot a second while at least one page listens, and shares it with every listener
 * (so ten open consoles cost one set of reads). Keeps the recent totals for pages that connect later.
 */
export class SnapshotHub {
  private readonly listeners = new Set<Listener>();
  private readonly history: SnapshotTotals[] = [];
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  private last: ConsoleSnapshot | undefined;
  private readonly stats: StatsReader;

  constructor(
    private readonly broker: Broker,
    private readonly onError: (err: unknown) => void = () => {},
    private readonly intervalMs = SNAPSHOT_INTERVAL_MS,
  ) {
    this.stats = new StatsReader(broker);
  }

  /** The recent totals, oldest first. */
  recent(): SnapshotTotals[] {
    return this.history.slice();
  }

  /** The latest snapshot, if one was taken. */
  latest(): ConsoleSnapshot | undefined {
    return this.last;
  }

  /** Adds a listener (starting the ticker) and returns its removal (stopping it after the last). */
  listen(listener: Listener): () => void {
    this.listeners.add(listener);
    if (!this.timer) {
      this.timer = setInterval(() => void this.tick(), this.intervalMs);
      this.timer.unref();
      void this.tick();
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  private async tick(): Promise<void> {
    if (this.busy) return; // a slow read: skip this second rather than pile up
    this.busy = true;
    try {
      const snapshot = await takeSnapshot(this.broker, Date.now, this.stats);
      this.last = snapshot;
      this.history.push(snapshot.totals);
      if (this.history.length > HISTORY) this.history.splice(0, this.history.length - HISTORY);
      for (const listener of this.listeners) listener(snapshot);
    } catch (err) {
      this.onError(err);
    } finally {
      this.busy = false;
    }
  }
}

/**
 * `GET /ui-api/events`: the console's live feed as server-sent events. Not an open path, so it
 * needs the Bearer token like every RPC (the page reads it with `fetch`, which can send the
 * header, not with `EventSource`, which cannot). It sends `event: history` (the recent totals)
 * once, then `event: snapshot` every second, and a comment every 15 s through quiet stretches. The
 * stream ends when the client goes away or the server begins a graceful stop.
 */
export function registerEvents(app: Hono<ServerEnv>, state: ServerState): SnapshotHub {
  const hub = new SnapshotHub(state.broker, (err) =>
    state.logger.warn({ err: String(err) }, "console snapshot failed"),
  );
  app.get(EVENTS_PATH, (c) => {
    c.header("X-Accel-Buffering", "no");
    return streamSSE(c, async (stream) => {
      let pending = Promise.resolve();
      let writing = false;
      const send = (event: string, data: unknown) => {
        if (writing) return; // the client is slow: drop this one, the next is a full snapshot again
        writing = true;
        pending = stream
          .writeSSE({ event, data: JSON.stringify(data) })
          .catch(() => {})
          .finally(() => {
            writing = false;
          });
      };
      await stream.writeSSE({ event: "history", data: JSON.stringify(hub.recent()), retry: 2000 });
      const latest = hub.latest();
      if (latest) send("snapshot", latest);
      const stop = hub.listen((s) => send("snapshot", s));
      const keepAlive = setInterval(() => void stream.write(": keep-alive\n\n").catch(() => {}), 15_000);
      let end = () => {};
      const ended = new Promise<void>((resolve) => {
        end = resolve;
      });
      state.stopping.addEventListener("abort", end);
      c.req.raw.signal.addEventListener("abort", end);
      stream.onAbort(end);
      if (state.stopping.aborted || c.req.raw.signal.aborted) end();
      try {
        await ended;
      } finally {
        state.stopping.removeEventListener("abort", end);
        c.req.raw.signal.removeEventListener("abort", end);
        stop();
        clearInterval(keepAlive);
        await pending;
      }
    });
  });
  return hub;
}
