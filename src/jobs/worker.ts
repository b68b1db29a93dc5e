import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import type { Broker } from "../contract/broker.js";
import { ClosedError, LockLostError } from "../contract/errors.js";
import type { ClaimGate } from "../contract/job-service.js";
import { MAX_RENEW_BATCH } from "../contract/limits.js";
import type { CompleteItem, Message } from "../contract/types.js";
import type { QueueCore } from "./core.js";
import { LEASE_GRACE_MS, leaseMsOf } from "./job-record.js";
import { cancelReason, JobRunner } from "./job-runner.js";
import { runLogConsumer } from "./log-consumer.js";
import { engineQueue, splitEngineQueue } from "./naming.js";
import type { PeriodicScheduler } from "./periodic.js";
import { abortJob, type RunningJob } from "./running-job.js";
import { REAPER_LOCK, REAPER_LOCK_TTL_MS, type Topics } from "./topics.js";
import type { WorkerRunOptions } from "./types.js";

export const DEFAULT_CONCURRENCY = 16;

/** Jobs averaging under this (ms) are claimed ahead of free slots (up to 1.5 × `batchSize` waiting). */
const SHORT_JOB_MS = 5;
/**
 * Claims that took at least this long (ms) wait on a server: the next one is sent before the
 * buffer runs dry. An in-process claim takes a fraction of it and runs on this thread anyway.
 */
const REMOTE_CLAIM_MS = 1;

/** A job claimed ahead, waiting for a slot. */
interface Buffered {
  message: Message;
  claimedAt: number;
}

interface PendingCompletion {
  item: CompleteItem;
  resolve: () => void;
  reject: (err: unknown) => void;
}
export const DEFAULT_HEARTBEAT_MS = 5000;
/** The default most jobs one claim takes (never beyond free slots unless jobs are short). */
export const DEFAULT_BATCH = 64;
/** The longest a claim long-polls (the engine's cap); in-process it is woken by every enqueue. */
const LONG_POLL_MS = 20_000;

/**
 * A worker: claims jobs of its queues in batches (never more than its free slots), runs them, and
 * settles each through the broker; heartbeats every 5 s. Each claim leases its jobs for `leaseMs`,
 * and the worker renews its running jobs' leases every `min(heartbeat, leaseMs / 3)` (which also
 * notices cancel requests from other processes), so a dead worker's jobs run again within about
 * `leaseMs` while a live worker keeps them however long they run (their timeout is the runner's).
 * Hold on to it; `stop()` lets running handlers finish.
 */
export class Worker {
  readonly id: string;
  readonly queues: string[];
  readonly concurrency: number;
  private readonly engineQueues: string[];
  private readonly batchSize: number;
  private readonly heartbeatMs: number;
  /** The lease each claim and renewal asks for. */
  readonly leaseMs: number;
  /** How often running jobs' leases are renewed. */
  private readonly renewMs: number;
  private renewTimer: NodeJS.Timeout | undefined;
  private renewing = false;
  private readonly running = new Map<number, RunningJob>();
  private readonly settling = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  private slotFreed: (() => void) | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;
  private online = false;
  private gatesVersion = -1;
  private gates: ClaimGate[] = [];
  private runner: JobRunner | undefined;
  private loopDone: Promise<void> = Promise.resolve();
  /** Completions waiting for the next claim (or microtask) to be stored in one `completeBatch`. */
  private readonly outbox = new Map<string, PendingCompletion[]>();
  private outboxFlushQueued = false;
  private waitingForSlot = false;
  private broker: Broker | undefined;
  /** Jobs claimed ahead of free slots (only while jobs are short). */
  private readonly buffer: Buffered[] = [];
  /** The claim that refills `buffer` while the slots are busy, when one is in flight. */
  private claimingAhead: Promise<void> | undefined;
  /**
   * How long the last claim took when it came back full (ms); 0 after one that found fewer jobs
   * than it asked for: then nothing is known to wait, and nothing is claimed ahead. A long-poll
   * that parked first overstates it once: the claim ahead it then allows never parks.
   */
  private fullClaimMs = 0;
  /** Moving average of handler durations (ms). */
  private avgJobMs: number | undefined;
  /** Whether this worker's subscriptions were written (retried on each heartbeat until they are). */
  private subscriptionsRegistered = false;
  /** The managed log consumers' loops this worker runs. */
  private consumerLoops: Promise<void>[] = [];

  constructor(
    private readonly core: QueueCore,
    private readonly periodic: PeriodicScheduler,
    options: WorkerRunOptions = {},
    private readonly topics?: Topics,
  ) {
    this.id = `${hostname()}-${process.pid}-${randomBytes(4).toString("hex")}`;
    this.queues = options.queues && options.queues.length > 0 ? [...options.queues] : ["default"];
    this.engineQueues = this.queues.map((q) => engineQueue(core.namespace, q));
    this.concurrency = Math.max(1, Math.trunc(options.concurrency ?? DEFAULT_CONCURRENCY));
    this.batchSize = Math.max(1, Math.trunc(options.batchSize ?? Math.max(this.concurrency, DEFAULT_BATCH)));
    this.heartbeatMs = Math.max(10, options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_MS);
    this.leaseMs = options.leaseMs === undefined ? core.leaseMs : leaseMsOf(options.leaseMs);
    this.renewMs = Math.max(10, Math.min(this.heartbeatMs, Math.floor(this.leaseMs / 3)));
  }

  /** Starts the claim loop, the heartbeat and the periodic jobs. Called by `queue.runWorker`. */
  start(): void {
    this.core.events.emit("worker.started", { workerId: this.id, queues: this.queues });
    this.loopDone = this.loop();
    void this.heartbeat();
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), this.heartbeatMs);
    this.renewTimer = setInterval(() => void this.renewTick(), this.renewMs);
    this.periodic.attach(this.id);
    if (this.topics) {
      for (const c of this.topics.claimConsumers(this.id)) {
        this.consumerLoops.push(runLogConsumer(this.topics, c, this.abort.signal, this.core.logger));
      }
    }
  }

  /** Jobs running now. */
  get activeCount(): number {
    return this.running.size;
  }

  /**
   * Stops claiming, lets running handlers finish and settle, unregisters the worker. Idempotent;
   * never rejects.
   */
  stop(): Promise<void> {
    if (!this.stopping) {
      this.stopping = (async () => {
        this.periodic.detach(this.id);
        clearInterval(this.heartbeatTimer);
        this.abort.abort();
        this.slotFreed?.();
        this.flushOutbox();
        await this.loopDone.catch(() => {});
        await Promise.allSettled(this.consumerLoops);
        this.topics?.releaseConsumers(this.id);
        while (this.settling.size > 0) await Promise.allSettled([...this.settling]);
        // Renewals go on while running handlers finish: a drain may outlast a lease.
        clearInterval(this.renewTimer);
        try {
          const broker = await this.core.broker();
          await broker.removeWorker(this.id);
          // One last sweep of ephemeral subscriptions whose worker is gone.
          if (this.topics) await broker.reapSubscriptions();
        } catch {
          // the broker may already be closing
        }
        this.core.events.emit("worker.stopped", { workerId: this.id, queues: this.queues });
      })();
    }
    return this.stopping;
  }

  /** Aborts a running job's signal with a cancellation (true when this worker runs it). */
  cancelLocal(seq: number): boolean {
    const job = this.running.get(seq);
    if (!job) return false;
    job.cancelRequested = true;
    abortJob(job, cancelReason(String(seq)));
    return true;
  }

  private claimGates(): ClaimGate[] {
    if (this.gatesVersion !== this.core.tasksVersion) {
      this.gatesVersion = this.core.tasksVersion;
      this.gates = [];
      for (const t of this.core.tasks.values()) {
        if (t.options.maxConcurrent === undefined && !t.rate) continue;
        const gate: ClaimGate = { subject: t.name };
        if (t.options.maxConcurrent !== undefined)
          gate.maxLocked = Math.max(1, Math.trunc(t.options.maxConcurrent));
        if (t.rate) gate.rate = t.rate;
        this.gates.push(gate);
      }
    }
    return this.gates;
  }

  /**
   * Queues a completion. While the loop waits for a free slot, the loop stores it together with
   * its next claim (one transaction); otherwise it is stored at the end of the current microtasks.
   */
  private complete(queue: string, item: CompleteItem): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const list = this.outbox.get(queue);
      const entry = { item, resolve, reject };
      if (list) list.push(entry);
      else this.outbox.set(queue, [entry]);
      if (!this.waitingForSlot && !this.outboxFlushQueued) {
        this.outboxFlushQueued = true;
        queueMicrotask(() => this.flushOutbox());
      }
    });
  }

  private flushOutbox(): void {
    this.outboxFlushQueued = false;
    const broker = this.broker;
    if (!broker) return;
    for (const [queue, list] of this.outbox) {
      this.outbox.delete(queue);
      broker
        .completeBatch(
          queue,
          list.map((e) => e.item),
        )
        .then(
          (results) =>
            results.forEach((r, i) => {
              if (r.ok) list[i]!.resolve();
              else list[i]!.reject(new LockLostError());
            }),
          (err) => {
            for (const e of list) e.reject(err);
          },
        );
    }
  }

  private async loop(): Promise<void> {
    const broker = await this.core.broker();
    this.broker = broker;
    this.runner = new JobRunner(this.core, broker, { complete: (q, item) => this.complete(q, item) });
    let failures = 0;
    while (!this.abort.signal.aborted) {
      // Claimed ahead (short jobs only): start them as slots free, without a claim in between.
      while (this.buffer.length > 0 && this.running.size < this.concurrency)
        this.launch(this.buffer.shift()!);
      const free = this.concurrency - this.running.size;
      if (free <= 0) {
        this.claimAheadIfLow(broker);
        this.waitingForSlot = true;
        // Completions wait for the next claim's transaction, but never past this turn of the loop.
        if (this.outbox.size > 0 && !this.outboxFlushQueued) {
          this.outboxFlushQueued = true;
          setImmediate(() => this.flushOutbox());
        }
        await new Promise<void>((resolve) => {
          this.slotFreed = resolve;
        });
        this.slotFreed = undefined;
        this.waitingForSlot = false;
        continue;
      }
      if (this.claimingAhead) {
        // A claim ahead is already under way: its jobs come first.
        await this.claimingAhead;
        continue;
      }
      // The completions that freed the slots share this claim's transaction.
      this.flushOutbox();
      let batch: Message[];
      const asked = performance.now();
      const max = this.jobsAreShort() ? Math.max(free, this.batchSize) : Math.min(free, this.batchSize);
      try {
        batch = await broker.receiveAny(this.engineQueues, {
          maxMessages: max,
          waitMs: LONG_POLL_MS,
          gates: this.claimGates(),
          lockDurationMs: this.leaseMs,
          signal: this.abort.signal,
        });
        failures = 0;
      } catch (err) {
        if (this.abort.signal.aborted) break;
        if (err instanceof ClosedError) {
          // The broker is gone for good: nothing more can be claimed or heartbeaten.
          clearInterval(this.heartbeatTimer);
          clearInterval(this.renewTimer);
          this.core.logger.warn({ workerId: this.id }, "the broker closed; the worker stops claiming");
          break;
        }
        failures++;
        this.core.logger.warn({ workerId: this.id, err: String(err) }, "claim failed; retrying");
        await new Promise((r) => setTimeout(r, Math.min(5000, 50 * 2 ** Math.min(failures, 7))));
        continue;
      }
      const claimedAt = performance.now();
      this.fullClaimMs = batch.length >= max ? claimedAt - asked : 0;
      for (const m of batch) {
        if (this.running.size < this.concurrency) this.launch(m);
        else this.buffer.push({ message: m, claimedAt });
      }
    }
    // Completions queued while the loop waited for a slot would otherwise wait for a claim that no
    // longer comes (a handler that stops its own worker queues its completion just then).
    this.waitingForSlot = false;
    this.flushOutbox();
    // Stopping: claimed-ahead jobs go back at once, without spending an attempt.
    await this.claimingAhead;
    for (const b of this.buffer.splice(0)) {
      await broker
        .abandon(b.message.queue!, b.message.seqNumber, b.message.lockToken!, { countDelivery: false })
        .catch(() => {});
    }
  }

  /**
   * While the slots are busy with short jobs, at most half a batch waits in the buffer and the
   * last claim came back full, claims the next batch without waiting for a slot: the claim's round
   * trip then overlaps the jobs still to run instead of following them (on PostgreSQL that round
   * trip is most of a short job's cost). Up to one and a half batches then wait: a claim that only
   * topped them up to one batch came back after they ran out (PostgreSQL drains a sixth slower). It
   * does not long-poll; when it finds nothing, the loop's own claim parks as usual.
   */
  private claimAheadIfLow(broker: Broker): void {
    if (this.claimingAhead || this.abort.signal.aborted) return;
    if (this.fullClaimMs < REMOTE_CLAIM_MS || !this.jobsAreShort()) return;
    if (this.buffer.length * 2 > this.batchSize) return;
    const asked = performance.now();
    this.claimingAhead = broker
      .receiveAny(this.engineQueues, {
        maxMessages: this.batchSize,
        waitMs: 0,
        gates: this.claimGates(),
        lockDurationMs: this.leaseMs,
      })
      .then(
        (batch) => {
          const claimedAt = performance.now();
          this.fullClaimMs = batch.length >= this.batchSize ? claimedAt - asked : 0;
          for (const message of batch) this.buffer.push({ message, claimedAt });
        },
        (err) => {
          // The loop's own claim comes next and reports (and backs off) if the failure persists.
          if (!this.abort.signal.aborted)
            this.core.logger.debug({ workerId: this.id, err: String(err) }, "claim ahead failed");
        },
      )
      .finally(() => {
        this.claimingAhead = undefined;
      });
  }

  /** True while recent jobs took under `SHORT_JOB_MS` on average: claiming ahead then holds nobody up. */
  private jobsAreShort(): boolean {
    return this.avgJobMs !== undefined && this.avgJobMs < SHORT_JOB_MS;
  }

  private noteDuration(ms: number): void {
    this.avgJobMs = this.avgJobMs === undefined ? ms : this.avgJobMs * 0.8 + ms * 0.2;
  }

  private launch(entry: Message | Buffered): void {
    const m = "message" in entry ? entry.message : entry;
    if ("message" in entry && performance.now() - entry.claimedAt > LEASE_GRACE_MS / 2) {
      // Waited long enough in the buffer to eat into its lease: renew it before running it.
      this.launchAfterRenewal(m);
      return;
    }
    const started = performance.now();
    const job: RunningJob = {
      seq: m.seqNumber,
      queue: m.queue!,
      lockToken: m.lockToken!,
      controller: undefined,
      abortReason: undefined,
      cancelRequested: false,
    };
    this.running.set(job.seq, job);
    const free = () => {
      if (!this.running.delete(job.seq)) return;
      this.noteDuration(performance.now() - started);
      this.slotFreed?.();
    };
    const done = this.runner!.run(m, job, free).finally(() => {
      free();
      this.settling.delete(done);
    });
    this.settling.add(done);
  }

  private launchAfterRenewal(m: Message): void {
    const placeholder = -m.seqNumber;
    // Hold the slot while renewing.
    this.running.set(placeholder, {
      seq: placeholder,
      queue: m.queue!,
      lockToken: "",
      controller: undefined,
      abortReason: undefined,
      cancelRequested: false,
    });
    const renewal = (async () => {
      let ok = false;
      try {
        const [r] = await this.broker!.renewBatch(
          m.queue!,
          [{ seqNumber: m.seqNumber, lockToken: m.lockToken! }],
          { lockDurationMs: this.leaseMs },
        );
        ok = r?.ok === true;
      } catch {
        ok = false;
      }
      this.running.delete(placeholder);
      if (ok) this.launch(m);
      else this.slotFreed?.();
    })();
    this.settling.add(renewal);
    void renewal.finally(() => this.settling.delete(renewal));
  }

  private async heartbeat(): Promise<void> {
    let broker: Broker;
    try {
      broker = await this.core.broker();
      const res = await broker.heartbeat({
        workerId: this.id,
        queues: this.engineQueues,
        status: this.abort.signal.aborted ? "draining" : "active",
        hostname: hostname(),
        pid: process.pid,
        concurrency: this.concurrency,
        ...(this.core.namespace ? { details: { namespace: this.core.namespace } } : {}),
      });
      if (!this.online) {
        this.online = true;
        this.core.events.emit("worker.online", { workerId: this.id, queues: this.queues });
      }
      for (const w of res.reaped) {
        this.core.events.emit("worker.offline", {
          workerId: w.workerId,
          queues: w.queues.map((q) => splitEngineQueue(q).queue),
        });
      }
      await this.topicDuties(broker);
    } catch (err) {
      if (err instanceof ClosedError) clearInterval(this.heartbeatTimer);
      else if (!this.stopping)
        this.core.logger.warn({ workerId: this.id, err: String(err) }, "heartbeat failed");
    }
  }

  /**
   * Writes this worker's subscriptions (ephemeral ones owned by it) until that succeeded once, then
   * reaps ephemeral subscriptions of dead workers when this worker holds the reaper lease.
   */
  private async topicDuties(broker: Broker): Promise<void> {
    if (!this.topics || this.stopping) return;
    if (!this.subscriptionsRegistered && this.topics.hasRegistrations) {
      try {
        await this.topics.registerForWorker(this.id);
        this.subscriptionsRegistered = true;
      } catch (err) {
        this.core.logger.warn(
          { workerId: this.id, err: String(err) },
          "could not register subscriptions; retrying",
        );
      }
    }
    if (await broker.acquireLock(REAPER_LOCK, this.id, REAPER_LOCK_TTL_MS)) await broker.reapSubscriptions();
  }

  /** One renewal round (skipped while the previous one still runs). */
  private async renewTick(): Promise<void> {
    if (this.renewing || this.running.size === 0) return;
    this.renewing = true;
    try {
      await this.renewLeases(await this.core.broker());
    } catch (err) {
      if (err instanceof ClosedError) clearInterval(this.renewTimer);
      else this.core.logger.warn({ workerId: this.id, err: String(err) }, "lease renewal failed");
    } finally {
      this.renewing = false;
    }
  }

  /**
   * Renews the running jobs' leases for `leaseMs` and picks up cancel requests made elsewhere. A
   * job whose lease is lost (it lapsed and the job went back to the queue) has its signal aborted:
   * its outcome can no longer be stored (the lock token fences it), and it runs again elsewhere.
   */
  private async renewLeases(broker: Broker): Promise<void> {
    const byQueue = new Map<string, RunningJob[]>();
    for (const job of this.running.values()) {
      if (!job.lockToken) continue;
      const list = byQueue.get(job.queue) ?? [];
      list.push(job);
      byQueue.set(job.queue, list);
    }
    for (const [queue, jobs] of byQueue) {
      for (let i = 0; i < jobs.length; i += MAX_RENEW_BATCH) {
        const chunk = jobs.slice(i, i + MAX_RENEW_BATCH);
        const results = await broker.renewBatch(
          queue,
          chunk.map((j) => ({ seqNumber: j.seq, lockToken: j.lockToken })),
          { lockDurationMs: this.leaseMs },
        );
        results.forEach((r, k) => {
          if (r.cancelRequested) this.cancelLocal(r.seqNumber);
          const job = chunk[k]!;
          // Still running under the same token: its lease is gone, not merely its handler done.
          if (!r.ok && this.running.get(job.seq) === job) abortJob(job, new LockLostError());
        });
      }
    }
  }
}
