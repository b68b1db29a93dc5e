import type { ConsoleSnapshot, SnapshotTotals } from "../../../wire/console-events.js";
import { authHeaders, type Session } from "./api.js";
import { createStore } from "./store.js";

export type { ConsoleSnapshot, QueueSnapshot, SubscriptionSnapshot } from "../../../wire/console-events.js";

/** One point of a chart series: cumulative counters and the backlog at an instant. */
export interface Point {
  at: number;
  sent: number;
  completed: number;
  backlog: number;
}

export interface LiveState {
  /** `connecting` until the first snapshot, `live` while they arrive, `retrying` after a drop. */
  status: "off" | "connecting" | "live" | "retrying" | "unauthorized";
  snapshot?: ConsoleSnapshot;
  /** The totals over time, oldest first (seeded with the server's recent history). */
  totals: Point[];
  /** Each queue's points since this page connected. */
  perQueue: Map<string, Point[]>;
  error?: string;
  /** When the shown snapshot arrived (this browser's clock): while not `live`, data is this old. */
  receivedAt?: number;
  /** Counts the connections that delivered a snapshot: pages reload what they read when it moves. */
  epoch: number;
}

const KEEP = 300;

const OFF: LiveState = { status: "off", totals: [], perQueue: new Map(), epoch: 0 };

export const live = createStore<LiveState>(OFF);

/** A stream that delivers no snapshot for this long (the server sends one a second) is dropped. */
const SILENCE_MS = 5000;

const pointOf = (t: SnapshotTotals): Point => ({
  at: t.at_ms,
  sent: t.sent_total,
  completed: t.completed_total,
  backlog: t.backlog,
});

function push<T>(list: T[], item: T): T[] {
  const out = list.length >= KEEP ? list.slice(list.length - KEEP + 1) : list.slice();
  out.push(item);
  return out;
}

function onHistory(history: SnapshotTotals[]): void {
  live.update((s) => {
    if (s.totals.length > 0) return s; // a reconnect: what we have is at least as long
    return { ...s, totals: history.map(pointOf).slice(-KEEP) };
  });
}

function onSnapshot(snapshot: ConsoleSnapshot): void {
  live.update((s) => {
    const perQueue = new Map<string, Point[]>();
    for (const q of snapshot.queues) {
      const point = {
        at: snapshot.at_ms,
        sent: q.sent_total ?? 0,
        completed: q.completed_total ?? 0,
        backlog: q.active + q.locked + q.deferred + q.scheduled,
      };
      perQueue.set(q.name, push(s.perQueue.get(q.name) ?? [], point));
    }
    const last = s.totals.at(-1);
    const totals = last && last.at >= snapshot.at_ms ? s.totals : push(s.totals, pointOf(snapshot.totals));
    const epoch = s.status === "live" ? s.epoch : s.epoch + 1;
    return { status: "live", snapshot, totals, perQueue, receivedAt: Date.now(), epoch };
  });
}

/** Splits a server-sent-event stream into `(event, data)` pairs. */
export function sseParser(emit: (event: string, data: string) => void): (chunk: string) => void {
  let buffer = "";
  return (chunk) => {
    buffer += chunk.replace(/\r\n?/g, "\n");
    for (let cut = buffer.indexOf("\n\n"); cut >= 0; cut = buffer.indexOf("\n\n")) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let event = "message";
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") event = value;
        else if (field === "data") data.push(value);
      }
      if (data.length > 0) emit(event, data.join("\n"));
    }
  };
}

let controller: AbortController | undefined;

/**
 * Reads `GET /ui-api/events` with `fetch` (so the Bearer header can be sent, which `EventSource`
 * cannot do), reconnecting with a growing delay after a drop. A stream silent for SILENCE_MS is
 * dropped too (a broker that hangs, or a network that lost the connection without closing it).
 * Stops on 401 or `stopLive()`.
 */
export function startLive(session: Session): void {
  stopLive();
  const abort = new AbortController();
  controller = abort;
  live.set({ ...OFF, status: "connecting" });
  void (async () => {
    let delay = 1000;
    while (!abort.signal.aborted) {
      const attempt = new AbortController();
      const stopAttempt = () => attempt.abort();
      abort.signal.addEventListener("abort", stopAttempt);
      let heard = Date.now();
      const watchdog = setInterval(() => {
        if (Date.now() - heard > SILENCE_MS) attempt.abort(new Error("no snapshot for 5 s"));
      }, 1000);
      try {
        const res = await fetch(`${session.url}/ui-api/events`, {
          headers: { Accept: "text/event-stream", ...authHeaders(session) },
          signal: attempt.signal,
          cache: "no-store",
        });
        if (res.status === 401) {
          live.update((s) => ({ ...s, status: "unauthorized", error: "the token was refused" }));
          return;
        }
        if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
        const feed = sseParser((event, data) => {
          heard = Date.now();
          if (event === "snapshot") {
            delay = 1000;
            onSnapshot(JSON.parse(data) as ConsoleSnapshot);
          } else if (event === "history") onHistory(JSON.parse(data) as SnapshotTotals[]);
        });
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          feed(value);
        }
        throw new Error("the stream ended");
      } catch (err) {
        if (abort.signal.aborted) return;
        const reason = attempt.signal.aborted ? String(attempt.signal.reason?.message ?? "") : "";
        live.update((s) => ({ ...s, status: "retrying", error: reason || (err as Error).message }));
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(delay * 2, 10_000);
      } finally {
        clearInterval(watchdog);
        abort.signal.removeEventListener("abort", stopAttempt);
      }
    }
  })();
}

export function stopLive(): void {
  controller?.abort();
  controller = undefined;
  live.set(OFF);
}

/** Per-second rates between consecutive points (negative steps, e.g. after a restart, count as 0). */
export function rates(points: Point[], key: "sent" | "completed"): number[] {
  const out: number[] = [];
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1]!;
    const b = points[i]!;
    const dt = (b.at - a.at) / 1000;
    out.push(dt > 0 ? Math.max(0, (b[key] - a[key]) / dt) : 0);
  }
  return out;
}
