import type { HeartbeatResult, WorkerInfo, WorkerRecord } from "../../contract/job-service.js";
import { ask, type Verb, type WriteScope } from "../port.js";

/** A worker's row: its `WorkerInfo` as JSON, and its times. */
export interface WorkerRow {
  id: string;
  info: string;
  started_at: number;
  last_heartbeat: number;
}

/** The statements of worker heartbeats. */
export interface WorkerOps {
  /** Writes the worker's row (its info and `now` as its heartbeat). True when it had none. */
  upsert(a: { id: string; info: string; now: number }): boolean;
  /** Deletes the workers, but `except`, last heard from before `before`; returns their rows. */
  reap(a: { before: number; except: string }): WorkerRow[];
  /** Every worker, by id. */
  list(): WorkerRow[];
  /** Deletes a worker's row. True when there was one. */
  delete(id: string): boolean;
}

function workerRecord(row: WorkerRow): WorkerRecord {
  return {
    ...(JSON.parse(row.info) as WorkerInfo),
    startedAt: row.started_at,
    lastHeartbeat: row.last_heartbeat,
  };
}

/**
 * A heartbeat. Reaping happens in the heartbeat's own transaction and deletes the rows it reports,
 * so each dead worker is reported to exactly one live one.
 */
export function* heartbeat(s: WriteScope, worker: WorkerInfo, staleAfterMs: number): Verb<HeartbeatResult> {
  const id = worker.workerId;
  const registered = yield* ask((o) => o.workers.upsert({ id, info: JSON.stringify(worker), now: s.now }));
  const reaped = yield* ask((o) => o.workers.reap({ before: s.now - staleAfterMs, except: id }));
  return { registered, reaped: reaped.map(workerRecord) };
}

export function* listWorkers(): Verb<WorkerRecord[]> {
  return (yield* ask((o) => o.workers.list())).map(workerRecord);
}

export function* removeWorker(id: string): Verb<boolean> {
  return yield* ask((o) => o.workers.delete(id));
}
