import type { EventInput, MessageLogEntry, MetricIncrement, MetricKind } from "../../contract/job-service.js";
import type { FlowOps } from "../../core/verbs/flows.js";
import type { SqliteDatabase } from "./database.js";
import { SqliteEventLogOps } from "./event-log.js";
import { SqliteJobMetricsOps } from "./job-metrics.js";
import { SqliteMessageLogOps } from "./message-logs.js";

/**
 * The flows family's statements (SQLite). Each table's statements are prepared when first used:
 * a broker that never logs, publishes events or counts metrics never prepares them.
 */
export class SqliteFlowOps implements FlowOps {
  private logs: SqliteMessageLogOps | undefined;
  private events: SqliteEventLogOps | undefined;
  private metrics: SqliteJobMetricsOps | undefined;

  constructor(private readonly db: SqliteDatabase) {}

  private get messageLogs(): SqliteMessageLogOps {
    this.logs ??= new SqliteMessageLogOps(this.db);
    return this.logs;
  }

  private get eventLog(): SqliteEventLogOps {
    this.events ??= new SqliteEventLogOps(this.db);
    return this.events;
  }

  private get jobMetrics(): SqliteJobMetricsOps {
    this.metrics ??= new SqliteJobMetricsOps(this.db);
    return this.metrics;
  }

  holdsLease(a: { queue: string; seq: number; token: string }): boolean {
    return this.messageLogs.holdsLease(a);
  }

  appendLog(a: { seq: number; now: number; lines: string[]; keep: number }): number {
    return this.messageLogs.appendLog(a);
  }

  logLines(a: { seq: number; offset: number; limit: number }): MessageLogEntry[] {
    return this.messageLogs.logLines(a);
  }

  logCount(a: { seq: number }): number {
    return this.messageLogs.logCount(a);
  }

  appendEvents(a: { events: EventInput[]; now: number; keep: number; cutoff: number }): void {
    this.eventLog.appendEvents(a);
  }

  eventsAfter(a: { afterId: number; limit: number }) {
    return this.eventLog.eventsAfter(a);
  }

  lastEventId(): number {
    return this.eventLog.lastEventId();
  }

  addMetrics(a: { minute: number; increments: MetricIncrement[]; oldest: number; inWrite?: boolean }): void {
    this.jobMetrics.addMetrics(a);
  }

  readMetrics(a: { kind: MetricKind; from: number; to: number; queues?: string[] }) {
    return this.jobMetrics.readMetrics(a);
  }
}
