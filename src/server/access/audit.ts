import { MqliteError } from "../../contract/errors.js";
import type { Logger } from "../../contract/logger.js";
import type { Operation } from "./policy.js";
import type { Principal } from "./tokens.js";

/** What an administrative change acted on, from its arguments. */
export interface AuditTarget {
  queue?: string;
  topic?: string;
  subscription?: string;
  /** A redrive into another queue. */
  target_queue?: string;
  /** A DLQ or settled-message deletion: which states, and how many sequence numbers were named. */
  states?: string[];
  seq_numbers?: number;
}

type Args = readonly unknown[];
const str = (v: unknown) => String(v ?? "");
const onQueue = ([queue]: Args): AuditTarget => ({ queue: str(queue) });
const onSubscription = ([topic, name]: Args): AuditTarget => ({ topic: str(topic), subscription: str(name) });

const TARGETS: Partial<Record<Operation, (args: Args) => AuditTarget>> = {
  createQueue: onQueue,
  deleteQueue: onQueue,
  purge: onQueue,
  pauseQueue: onQueue,
  resumeQueue: onQueue,
  redrive: ([queue, options]) => {
    const target = (options as { target?: string } | undefined)?.target;
    return { queue: str(queue), ...(target && target !== queue && { target_queue: target }) };
  },
  deleteSettled: ([queue, options]) => {
    const o = options as { states?: string[]; seqNumbers?: number[] } | undefined;
    return {
      queue: str(queue),
      ...(o?.states && { states: o.states }),
      ...(o?.seqNumbers && { seq_numbers: o.seqNumbers.length }),
    };
  },
  removeMessages: ([queue, seqNumbers]) => ({
    queue: str(queue),
    ...(Array.isArray(seqNumbers) && { seq_numbers: seqNumbers.length }),
  }),
  subscribe: onSubscription,
  unsubscribe: onSubscription,
  pauseSubscription: onSubscription,
  resumeSubscription: onSubscription,
  subscribeTask: onSubscription,
  subscribeLog: onSubscription,
  declareTopic: ([name]) => ({ topic: str(name) }),
};

/** The error code an audit line records for a failure (`internal` for anything unnamed). */
function codeOf(err: unknown): string {
  return err instanceof MqliteError ? err.code : "internal";
}

/**
 * Writes one line per administrative change: `{"audit": "<operation>", "token_id", "target": {…},
 * "result": "ok" | <error code>}`, plus `count` when the change reports how many messages it
 * moved or deleted. Successes at info, failures (a refusal included) at warn. The token itself is
 * never written: its id is the configured name or a hash prefix (null when auth is off).
 */
export function writeAudit(
  logger: Logger,
  principal: Principal,
  operation: Operation,
  args: Args,
  outcome: { ok: true; value: unknown } | { ok: false; error: unknown },
): void {
  const line = {
    audit: operation,
    token_id: principal.id,
    target: TARGETS[operation]?.(args) ?? {},
    result: outcome.ok ? "ok" : codeOf(outcome.error),
    ...(outcome.ok && typeof outcome.value === "number" && { count: outcome.value }),
  };
  if (outcome.ok) logger.info(line, "audit");
  else logger.warn(line, "audit");
}
