import type { EventInput, MessageLogEntry, MetricIncrement, MetricKind } from "../../contract/job-service.js";
import type { Async } from "../../core/port.js";
import type { FlowOps } from "../../core/verbs/flows.js";
import type { Conn } from "./db.js";
import { PgEventLogOps } from "./event-log.js";
import { PgJobMetricsOps } from "./job-metrics.js";
import { PgMessageLogOps } from "./message-logs.js";

/** The flows family's statements on one connection (PostgreSQL), by table. */
export class PgFlowOps implements Async<FlowOps> {
  private readonly logs: PgMessageLogOps;
  private readonly events: PgEventLogOps;
  private readonly metrics: PgJobMetricsOps;

  constructor(c: Conn, schema: string) {
    this.logs = new PgMessageLogOps(c);
    this.events = new PgEventLogOps(c, schema);
    this.metrics = new PgJobMetricsOps(c);
  }

  holdsLease(a: { queue: string; seq: number; token: string }): Promise<boolean> {
    return this.logs.holdsLease(a);
  }

  appendLog(a: { seq: number; now: number; lines: string[]; keep: number }): Promise<number> {
    return this.logs.appendLog(a);
  }

  logLines(a: { seq: number; offset: number; limit: number }): Promise<MessageLogEntry[]> {
    return this.logs.logLines(a);
  }

  logCount(a: { seq: number }): Promise<number> {
    return this.logs.logCount(a);
  }

  appendEvents(a: { events: EventInput[]; now: number; keep: number; cutoff: number }): Promise<void> {
    return this.events.appendEvents(a);
  }

  eventsAfter(a: { afterId: number; limit: number }) {
    return this.events.eventsAfter(a);
  }

  lastEventId(): Promise<number> {
    return this.events.lastEventId();
  }

  addMetrics(a: {
    minute: number;
    increments: MetricIncrement[];
    oldest: number;
    inWrite?: boolean;
  }): Promise<void> {
    return this.metrics.addMetrics(a);
  }

  readMetrics(a: { kind: MetricKind; from: number; to: number; queues?: string[] }) {
    return this.metrics.readMetrics(a);
  }
}
