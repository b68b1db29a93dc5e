import { InvalidArgumentError, NotFoundError } from "../../contract/errors.js";
import type { Dependency, DependencyOutcome } from "../../contract/job-service.js";
import type { MessageState } from "../../contract/types.js";
import { childFailedDescription, outcomeOf, type PreparedFlowNode, waitingNodes } from "../flow-input.js";
import { ask, type Verb, type WriteScope } from "../port.js";
import { countFailed } from "./flows.js";
import { send } from "./send.js";

/** An open dependency whose child has settled (or is gone). */
export interface SettledChild {
  child: number;
  parent: number;
  /** The child's state; null when its row is gone (completed and not kept). */
  state: MessageState | null;
  description: string | null;
}

/** The child that fails a parent: its first with `failParentOnFailure` that did not complete. */
export interface FailingChild {
  child: number;
  outcome: DependencyOutcome;
  error: string | null;
}

/** The statements of a flow's waits (`message_dependencies`). */
export interface DependencyOps {
  /** Records that `parent` waits for `child`. */
  add(child: number, parent: number, failParent: boolean): void;
  /** Parks a message (deferred) until its children settle. */
  hold(seq: number): void;
  /** Open dependencies whose child has settled: of these children, or all; ordered by parent. */
  settledChildren(children?: readonly number[]): SettledChild[];
  /**
   * Makes concurrent resolvers of one parent's children wait for each other, so that the last of
   * them sees every other resolution (a single-writer dialect has nothing to do).
   */
  lockParent(parent: number): void;
  /** Records a child's outcome on its dependency. */
  resolve(child: number, outcome: DependencyOutcome, error: string | null): void;
  /** Whether `parent` still waits for a child. */
  hasOpen(parent: number): boolean;
  /** The queue of `parent` while it waits (deferred); undefined otherwise. */
  waitingQueue(parent: number): string | undefined;
  /** The child that fails `parent`, if any. */
  failingChild(parent: number): FailingChild | undefined;
  /** Dead-letters a waiting parent (a child failed it). */
  failParent(parent: number, description: string, now: number): void;
  /** Makes a waiting parent claimable now. */
  activateParent(parent: number, now: number): void;
  /** The dependencies of `parent`, by child. */
  list(parent: number): Dependency[];
}

/**
 * Sends a flow in one transaction: each node to its queue (a plain queue only), parents parked
 * until their children settle. A node that a unique key or dedup answers with a live message is
 * refused: its parent would wait on a message that is not its child.
 */
export function* sendFlow(s: WriteScope, nodes: readonly PreparedFlowNode[]): Verb<number[]> {
  const waiting = waitingNodes([...nodes]);
  const rows = yield* ask((o) => o.send.queueRows([...new Set(nodes.map((n) => n.queue))]));
  const seqs: number[] = [];
  for (const [i, n] of nodes.entries()) {
    if (rows.get(n.queue)?.kind !== "queue") throw new NotFoundError(`mqlite: queue not found: ${n.queue}`);
    const out = yield* send(s, n.queue, [n.message], { scheduledAt: 0, ttlMs: 0 });
    if (out.stored === 0)
      throw new InvalidArgumentError("mqlite: a flow node matched a live message (unique key or dedup)");
    const seq = out.seqs[0]!;
    seqs.push(seq);
    if (waiting.has(i)) yield* ask((o) => o.dependencies.hold(seq));
    const parent = n.parent;
    if (parent !== undefined) yield* ask((o) => o.dependencies.add(seq, seqs[parent]!, n.failParent));
  }
  return seqs;
}

/**
 * Resolves the dependencies of settled children and releases each parent left with none open:
 * active, or dead-lettered when a child that fails it did not complete. A parent failed so is
 * settled in turn, and its own parent is looked at next round. Returns how many parents moved.
 */
export function* releaseDependents(s: WriteScope, children: readonly number[]): Verb<number> {
  const activated = new Map<string, number>();
  const failed: number[] = [];
  const failedQueues: string[] = [];
  let rows = yield* ask((o) => o.dependencies.settledChildren(children));
  while (rows.length > 0) {
    const parents = new Set<number>();
    for (const r of rows) {
      if (!parents.has(r.parent)) {
        parents.add(r.parent);
        yield* ask((o) => o.dependencies.lockParent(r.parent));
      }
      const outcome = outcomeOf(r.state ?? undefined);
      yield* ask((o) =>
        o.dependencies.resolve(r.child, outcome, outcome === "completed" ? null : r.description),
      );
    }
    const next: number[] = [];
    for (const p of parents) {
      if (yield* ask((o) => o.dependencies.hasOpen(p))) continue;
      const queue = yield* ask((o) => o.dependencies.waitingQueue(p));
      if (queue === undefined) continue;
      const failing = yield* ask((o) => o.dependencies.failingChild(p));
      if (failing) {
        const why = childFailedDescription(failing.child, failing.outcome, failing.error);
        yield* ask((o) => o.dependencies.failParent(p, why, s.now));
        failed.push(p);
        failedQueues.push(queue);
        next.push(p);
      } else {
        yield* ask((o) => o.dependencies.activateParent(p, s.now));
        activated.set(queue, (activated.get(queue) ?? 0) + 1);
      }
    }
    rows = next.length > 0 ? yield* ask((o) => o.dependencies.settledChildren(next)) : [];
  }
  yield* countFailed(s.now, failedQueues);
  for (const [queue, n] of activated) s.effects.activated(queue, n);
  s.effects.settled(failed);
  let n = failed.length;
  for (const c of activated.values()) n += c;
  return n;
}

/** The children whose dependency is open though they settled (the sweep's read: it writes only when there are some). */
export function* settledChildren(): Verb<number[]> {
  return (yield* ask((o) => o.dependencies.settledChildren())).map((r) => r.child);
}

export function* dependencies(seq: number): Verb<Dependency[]> {
  return yield* ask((o) => o.dependencies.list(seq));
}
