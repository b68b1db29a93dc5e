import type { DlqBounds } from "../dlq-bounds.js";
import { TOPIC_PURGE_LIMIT } from "../fanout.js";
import type { MaintenanceStep } from "../loops.js";
import { emptyResult, type MaintenanceResult } from "../maintenance-result.js";
import { ask, type Verb, type WriteScope } from "../port.js";
import { type DeadLetterOps, enforceRetention } from "./dead-letters.js";
import { countFailed } from "./flows.js";

/** A lapsed lease the reaper released: back to active, or dead-lettered at the delivery limit. */
export interface Reaped {
  id: number;
  queue: string;
  deadLettered: boolean;
}

/** How many rows of each queue a TTL pass expired. */
export interface ExpiredInQueue {
  queue: string;
  n: number;
}

/**
 * The statements the upkeep needs (the background steps and the dead-letter queue). Each runs
 * inside the step's transaction; every one is safe on two processes or nodes at once (each touches
 * a row only under its lock and re-checks it).
 */
export interface MaintenanceOps extends DeadLetterOps {
  /** Lapsed leases → active, or dead-lettered (`MaxDeliveryCountExceeded`) at the delivery limit. */
  reapLeases(a: { now: number }): Reaped[];
  /** The earliest lease end, if any message is locked (the reaper's next wake-up). */
  nextLeaseEnd(): number | undefined;
  /** Due scheduled rows → active; the queue of each row activated. */
  activateDue(a: { now: number }): string[];
  /** The earliest scheduled delivery time, if any (the scheduler's next wake-up). */
  nextScheduled(): number | undefined;
  /** Expired live rows of queues that dead-letter on expiry → dead-lettered (`TTLExpired`); how many per queue. */
  deadLetterExpired(a: { now: number }): ExpiredInQueue[];
  /** Expired live rows of the other queues → deleted; how many per queue. */
  deleteExpired(a: { now: number }): ExpiredInQueue[];
  /** Kept outcomes (completed, cancelled) whose retention lapsed → deleted (a bounded batch). */
  dropRetained(a: { now: number }): number;
  /** Named locks whose lease lapsed → deleted. */
  dropExpiredLocks(a: { now: number }): void;
  /** Dedup rows older than the largest dedup window of any queue → deleted. */
  dropDedup(a: { now: number }): number;
  /** Expired settlement receipts and receive attempts → deleted. */
  dropExpiredAux(a: { now: number }): number;
  /** One compaction pass of the topic log, of at most `budget` rows; how many were dropped. */
  compactTopicLog(a: { now: number; budget: number }): number;
}

/** What one background step changed, and (scheduler, reaper) when its rows fall due next. */
export interface StepOutcome {
  result: MaintenanceResult;
  next?: number;
}

/**
 * Crash recovery on open: only leases that lapsed are released (another live process or node may
 * hold the rest). Nobody waits on this broker yet, so nothing is announced.
 */
export function* recoverLeases(now: number): Verb<void> {
  yield* ask((o) => o.maintenance.reapLeases({ now }));
}

/** Runs one background step and announces what it made claimable or final. */
export function* runStep(s: WriteScope, step: MaintenanceStep, bounds: DlqBounds): Verb<StepOutcome> {
  const out = emptyResult();
  const now = s.now;
  let next: number | undefined;
  if (step === "reap") {
    const dead: string[] = [];
    for (const row of yield* ask((o) => o.maintenance.reapLeases({ now }))) {
      if (row.deadLettered) {
        out.deadLettered++;
        out.settled.push(row.id);
        dead.push(row.queue);
        // Announced too: when it headed a group (or a strict queue), the next one is claimable now.
        out.activated.add(row.queue);
      } else {
        out.requeued++;
        out.activated.add(row.queue);
      }
    }
    yield* countFailed(now, dead);
    next = yield* ask((o) => o.maintenance.nextLeaseEnd());
  } else if (step === "schedule") {
    for (const queue of yield* ask((o) => o.maintenance.activateDue({ now }))) {
      out.scheduledActivated++;
      out.activated.add(queue);
    }
    next = yield* ask((o) => o.maintenance.nextScheduled());
  } else if (step === "expire") {
    const expired = [
      ...(yield* ask((o) => o.maintenance.deadLetterExpired({ now }))),
      ...(yield* ask((o) => o.maintenance.deleteExpired({ now }))),
    ];
    for (const { queue, n } of expired) {
      out.expired += n;
      // Announced: an expired locked, deferred or scheduled row may have held its group's line (or
      // a strict queue's), and the next one is claimable now. The store cannot tell the state a row
      // expired from, so every queue with an expiry is announced (a wasted claim at worst).
      out.activated.add(queue);
    }
    out.retainedDropped += yield* ask((o) => o.maintenance.dropRetained({ now }));
    yield* ask((o) => o.maintenance.dropExpiredLocks({ now }));
  } else if (step === "janitor") {
    out.dedupDropped += yield* ask((o) => o.maintenance.dropDedup({ now }));
    out.auxDropped += yield* ask((o) => o.maintenance.dropExpiredAux({ now }));
  } else {
    out.retentionDropped += yield* enforceRetention(bounds, now);
    out.retentionDropped += yield* ask((o) =>
      o.maintenance.compactTopicLog({ now, budget: TOPIC_PURGE_LIMIT }),
    );
  }
  for (const q of out.activated) s.effects.activated(q);
  if (out.settled.length > 0) s.effects.settled(out.settled);
  return { result: out, next };
}
