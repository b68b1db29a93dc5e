import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { Broker } from "../contract/broker.js";
import { MESSAGE_STATES, type QueueStats } from "../contract/types.js";

/** The RPC-latency buckets of the original (seconds). */
export const RPC_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20];

const statsKey: Record<(typeof MESSAGE_STATES)[number], keyof QueueStats> = {
  active: "active",
  locked: "locked",
  deferred: "deferred",
  scheduled: "scheduled",
  completed: "completed",
  cancelled: "cancelled",
  dead_lettered: "deadLettered",
};

/** A broker that counts its own completions (the embedded engine does). */
interface CountsCompletions {
  completedCount(queue: string): number;
}
const countsCompletions = (b: Broker): b is Broker & CountsCompletions =>
  typeof (b as Partial<CountsCompletions>).completedCount === "function";

/** What the server holds for its clients, read at scrape time. */
export interface ServingLoad {
  /** Long-polls parked now. */
  readonly parkedLongPolls: number;
  /** Bytes of large request bodies being read and decoded now. */
  readonly largeBodyBytes: number;
  /** Large request bodies waiting for room in the budget. */
  readonly largeBodiesWaiting: number;
}

let processRegistry: Registry | undefined;

/** Node's process metrics, collected once per process however many servers it runs. */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/**
 * `/metrics`: the original's queue gauges, completed counter and RPC-latency histogram (spec §7),
 * plus Node's process metrics. Queue figures are read from the broker at scrape time.
 */
export class ServerMetrics {
  private readonly registry = new Registry();
  private readonly rpcDuration: Histogram<"rpc">;
  private readonly completedHere = new Map<string, number>();
  private snapshot: QueueStats[] = [];

  constructor(
    private readonly broker: Broker,
    load?: ServingLoad,
  ) {
    const registers = [this.registry];
    const self = this;
    if (load) {
      const gauge = (name: string, help: string, read: () => number) =>
        new Gauge({
          name,
          help,
          registers,
          collect() {
            this.set(read());
          },
        });
      gauge("mqlite_long_polls_parked", "Long-polls parked on this server.", () => load.parkedLongPolls);
      gauge(
        "mqlite_large_body_bytes",
        "Bytes of the large-body budget in use: large request bodies (256 KiB and up) being read and decoded, and answers' messages beyond 256 KiB each.",
        () => load.largeBodyBytes,
      );
      gauge(
        "mqlite_large_bodies_waiting",
        "Large request bodies waiting for room in the large-body budget.",
        () => load.largeBodiesWaiting,
      );
    }
    new Gauge({
      name: "mqlite_queue_messages",
      help: "Messages in the queue by state.",
      labelNames: ["queue", "state"] as const,
      registers,
      collect() {
        this.reset();
        for (const s of self.snapshot)
          for (const state of MESSAGE_STATES)
            this.set({ queue: s.queue, state }, s[statsKey[state]] as number);
      },
    });
    new Gauge({
      name: "mqlite_queue_total",
      help: "Messages in the queue, every state.",
      labelNames: ["queue"] as const,
      registers,
      collect() {
        this.reset();
        for (const s of self.snapshot) this.set({ queue: s.queue }, s.total);
      },
    });
    new Gauge({
      name: "mqlite_queue_oldest_message_age_ms",
      help: "Age of the oldest active or locked message, 0 when none.",
      labelNames: ["queue"] as const,
      registers,
      collect() {
        this.reset();
        for (const s of self.snapshot) this.set({ queue: s.queue }, s.oldestMessageAgeMs);
      },
    });
    new Counter({
      name: "mqlite_messages_completed_total",
      help: "Messages completed (deleted by Complete or CompleteBatch) since this process started.",
      labelNames: ["queue"] as const,
      registers,
      collect() {
        this.reset();
        for (const s of self.snapshot) this.inc({ queue: s.queue }, self.completed(s.queue));
      },
    });
    this.rpcDuration = new Histogram({
      name: "mqlite_rpc_duration_seconds",
      help: "RPC latency.",
      labelNames: ["rpc"] as const,
      buckets: RPC_BUCKETS,
      registers,
    });
  }

  /**
   * The latency recorder of one RPC (`rpc` like `QueueService/Send`), its label resolved once, at
   * the first call (an RPC that was never called has no series).
   */
  observer(rpc: string): (seconds: number) => void {
    let child: { observe(seconds: number): void } | undefined;
    return (seconds) => {
      child ??= this.rpcDuration.labels({ rpc });
      child.observe(seconds);
    };
  }

  /** Counts completions the server saw, for brokers that do not count their own. */
  noteCompleted(queue: string, n: number): void {
    if (n > 0 && !countsCompletions(this.broker))
      this.completedHere.set(queue, (this.completedHere.get(queue) ?? 0) + n);
  }

  private completed(queue: string): number {
    return countsCompletions(this.broker)
      ? this.broker.completedCount(queue)
      : (this.completedHere.get(queue) ?? 0);
  }

  /** The Prometheus text exposition. */
  async render(): Promise<string> {
    const queues = await this.broker.listQueues();
    const stats: QueueStats[] = [];
    for (const q of queues) {
      try {
        stats.push(await this.broker.stats(q.name));
      } catch {
        // deleted between the listing and now
      }
    }
    this.snapshot = stats;
    return Registry.merge([this.registry, processMetrics()]).metrics();
  }

  /** `text/plain; version=0.0.4; charset=utf-8`. */
  get contentType(): string {
    return this.registry.contentType;
  }
}
