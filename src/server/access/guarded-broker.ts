import type { Broker } from "../../contract/broker.js";
import { PermissionDeniedError } from "../../contract/errors.js";
import type { Logger } from "../../contract/logger.js";
import { writeAudit } from "./audit.js";
import { AUDITED, type BySeq, type Operation, POLICY } from "./policy.js";
import { covers, missingScope, type Need } from "./scopes.js";
import type { Principal } from "./tokens.js";

type Fn = (...args: unknown[]) => Promise<unknown>;

/** The refusal of a call `principal` has no scope for, naming the scope it needed. */
export function denied(principal: Principal, scope: string): PermissionDeniedError {
  const who = principal.id === null ? "this request" : `token "${principal.id}"`;
  return new PermissionDeniedError(
    `mqlite: ${who} lacks the scope "${scope}" (it has: ${principal.scopes.join(", ")})`,
  );
}

/** Throws `permission_denied` unless the principal's scopes cover `need`. */
export function requireScope(principal: Principal, need: Need): void {
  if (!covers(principal.grants, need)) throw denied(principal, missingScope(principal.grants, need));
}

/** A message addressed by sequence number is readable by whoever may send to or listen on its queue. */
function requireQueues(principal: Principal, queues: Iterable<string>): void {
  for (const queue of new Set(queues)) {
    const names = [queue];
    if (
      !covers(principal.grants, { kind: "listen", names }) &&
      !covers(principal.grants, { kind: "send", names })
    )
      throw denied(principal, `listen:${queue}`);
  }
}

/**
 * `broker` as `principal` may use it: each operation checks its scope first (`POLICY`), and every
 * administrative change writes an audit line (`AUDITED`). Built once per configured token, so a
 * request costs a property lookup, not an allocation.
 */
export function guardBroker(broker: Broker, principal: Principal, logger: Logger): Broker {
  const all = covers(principal.grants, { kind: "manage" });
  const wrapped = new Map<PropertyKey, Fn>();
  const original = (op: string): Fn => (broker as unknown as Record<string, Fn>)[op]!.bind(broker);

  for (const op of Object.keys(POLICY) as (keyof typeof POLICY)[]) {
    if (typeof (broker as unknown as Record<string, unknown>)[op] !== "function") continue;
    const call = original(op);
    const rule = POLICY[op];
    if (AUDITED.has(op)) {
      wrapped.set(op, async (...args) => {
        try {
          if (!all) requireScope(principal, rule(args));
          const value = await call(...args);
          writeAudit(logger, principal, op as Operation, args, { ok: true, value });
          return value;
        } catch (error) {
          writeAudit(logger, principal, op as Operation, args, { ok: false, error });
          throw error;
        }
      });
    } else if (!all) {
      // Not async (a hot path), but a refusal is still a rejected promise, as the contract's.
      wrapped.set(op, (...args) => {
        const need = rule(args);
        if (!covers(principal.grants, need))
          return Promise.reject(denied(principal, missingScope(principal.grants, need)));
        return call(...args);
      });
    }
  }
  if (!all) wrapBySeq(broker, principal, wrapped);

  return new Proxy(broker, {
    get(target, prop) {
      const own = wrapped.get(prop);
      if (own) return own;
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      // Bound to the broker itself (a class with private fields rejects a proxy as `this`), once. A
      // method outside the contract (an engine's extra, `close`) is for the server's own use.
      const bound: Fn = all ? (value.bind(target) as Fn) : () => Promise.reject(denied(principal, "manage"));
      wrapped.set(prop, bound);
      return bound;
    },
  });
}

/** The operations that name messages by sequence number: checked on the queues of those messages. */
function wrapBySeq(broker: Broker, principal: Principal, wrapped: Map<PropertyKey, Fn>): void {
  const ops: Record<BySeq, Fn> = {
    getMessages: async (seqNumbers) => {
      const records = await broker.getMessages(seqNumbers as number[]);
      requireQueues(
        principal,
        records.map((r) => r.queue),
      );
      return records;
    },
    messageErrors: async (seqNumber) => {
      const records = await broker.getMessages([seqNumber as number]);
      requireQueues(
        principal,
        records.map((r) => r.queue),
      );
      return broker.messageErrors(seqNumber as number);
    },
    awaitSettled: async (seqNumbers, options) => {
      const records = await broker.getMessages(seqNumbers as number[]);
      requireQueues(
        principal,
        records.map((r) => r.queue),
      );
      return broker.awaitSettled(seqNumbers as number[], options as never);
    },
    dependencies: async (seqNumber) => {
      const records = await broker.getMessages([seqNumber as number]);
      requireQueues(
        principal,
        records.map((r) => r.queue),
      );
      return broker.dependencies(seqNumber as number);
    },
    messageLog: async (seqNumber, options) => {
      const records = await broker.getMessages([seqNumber as number]);
      requireQueues(
        principal,
        records.map((r) => r.queue),
      );
      return broker.messageLog(seqNumber as number, options as never);
    },
  };
  for (const [op, fn] of Object.entries(ops)) wrapped.set(op, fn);
}
