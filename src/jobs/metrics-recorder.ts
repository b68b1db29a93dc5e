import type { Broker } from "../contract/broker.js";
import type { MetricIncrement, MetricKind } from "../contract/job-service.js";
import { MAX_METRIC_INCREMENTS_PER_CALL } from "../contract/limits.js";
import type { Logger } from "../contract/logger.js";

/**
 * How long counts gather before one `addMetrics` stores them: a burst of settlements costs one
 * write. A bucket is the broker's minute at the write, so a count can land in the next minute.
 */
const FLUSH_DELAY_MS = 200;

/**
 * Counts this process's settled jobs (completed, and failed for good) into the broker's per-minute
 * metrics, which every process adds to. A crash loses the counts of its last moments, never jobs.
 */
export class MetricsRecorder {
  private counts = new Map<string, MetricIncrement>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly broker: () => Promise<Broker>,
    private readonly logger: Logger,
  ) {}

  /** One settled job of the engine queue `queue`. */
  count(queue: string, kind: MetricKind): void {
    const key = `${kind}\u0000${queue}`;
    const had = this.counts.get(key);
    if (had) had.count++;
    else this.counts.set(key, { queue, kind, count: 1 });
    if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.flush();
      }, FLUSH_DELAY_MS);
    }
  }

  /** Stores what is gathered; resolves once every count so far is stored (or dropped on error). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = [...this.counts.values()];
    this.counts = new Map();
    if (batch.length > 0) this.flushing = this.flushing.then(() => this.store(batch));
    return this.flushing;
  }

  private async store(batch: MetricIncrement[]): Promise<void> {
    try {
      const broker = await this.broker();
      for (let i = 0; i < batch.length; i += MAX_METRIC_INCREMENTS_PER_CALL) {
        await broker.addMetrics(batch.slice(i, i + MAX_METRIC_INCREMENTS_PER_CALL));
      }
    } catch (err) {
      this.logger.warn({ counts: batch.length, err: String(err) }, "could not store job metrics");
    }
  }
}
