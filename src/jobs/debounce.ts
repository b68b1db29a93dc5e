import { QueueError } from "./errors.js";

/** A duration: milliseconds, or a number with a unit: `"500ms"`, `"30s"`, `"5m"`, `"2h"`, `"1d"`. */
export type Duration = number | `${number}${"ms" | "s" | "m" | "h" | "d"}`;

/** The debounce fields of `TaskOptions` and `EnqueueOptions`. */
export interface DebounceFields {
  /**
   * Collapses a burst of enqueues with the same `debounceKey` into one job: each enqueue moves its
   * run this far out (trailing edge). Needs `debounceKey` and `debounceMaxWait`.
   */
  debounce?: Duration;
  /**
   * The window's key, a template over the job's arguments: `{userId}` reads that property of the
   * first plain-object argument that has it, `{0}` the first argument. A template without
   * placeholders is one window for the whole task.
   */
  debounceKey?: string;
  /** The latest a window's job runs, counted from the window's first enqueue (at least `debounce`). */
  debounceMaxWait?: Duration;
  /** Default false: the job runs with the arguments that opened the window; true: with the latest. */
  debounceReplacePayload?: boolean;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses a `Duration` into milliseconds (a QueueError when it is not one). */
export function parseDuration(value: unknown, field: string): number {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new QueueError(`${field} must be a finite number of ms`);
    return Math.trunc(value);
  }
  if (typeof value === "string") {
    const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/.exec(value);
    if (m) return Math.trunc(Number(m[1]) * UNIT_MS[m[2]!]!);
  }
  throw new QueueError(`${field} must be ms or a duration like "500ms", "30s", "5m", "2h", "1d"`);
}

/** True when any debounce field is set. */
export function hasDebounce(f: DebounceFields | undefined): boolean {
  return (
    f !== undefined &&
    (f.debounce !== undefined ||
      f.debounceKey !== undefined ||
      f.debounceMaxWait !== undefined ||
      f.debounceReplacePayload !== undefined)
  );
}

/** A checked debounce rule: windows in ms and the key template. */
export interface DebounceRule {
  windowMs: number;
  maxWaitMs: number;
  keyTemplate: string;
  replacePayload: boolean;
}

/**
 * Checks debounce fields (`undefined` when none is set). The rules: `debounce` positive, a
 * non-empty `debounceKey`, and `debounceMaxWait` of at least `debounce` (without a ceiling, a steady
 * stream of enqueues would postpone the job for ever).
 */
export function debounceRule(context: string, f: DebounceFields): DebounceRule | undefined {
  if (f.debounce === undefined) {
    if (hasDebounce(f))
      throw new QueueError(
        `${context}: debounceKey, debounceMaxWait and debounceReplacePayload need debounce`,
      );
    return undefined;
  }
  const windowMs = parseDuration(f.debounce, `${context}: debounce`);
  if (windowMs <= 0) throw new QueueError(`${context}: debounce must be positive`);
  if (typeof f.debounceKey !== "string" || f.debounceKey === "")
    throw new QueueError(`${context}: debounce needs a debounceKey (the window it collapses into)`);
  if (f.debounceMaxWait === undefined)
    throw new QueueError(
      `${context}: debounce needs debounceMaxWait (a ceiling, or repeated enqueues postpone the job for ever)`,
    );
  const maxWaitMs = parseDuration(f.debounceMaxWait, `${context}: debounceMaxWait`);
  if (maxWaitMs < windowMs)
    throw new QueueError(
      `${context}: debounceMaxWait (${maxWaitMs} ms) must be at least debounce (${windowMs} ms)`,
    );
  if (f.debounceReplacePayload !== undefined && typeof f.debounceReplacePayload !== "boolean")
    throw new QueueError(`${context}: debounceReplacePayload must be a boolean`);
  return {
    windowMs,
    maxWaitMs,
    keyTemplate: f.debounceKey,
    replacePayload: f.debounceReplacePayload === true,
  };
}

/** The enqueue's fields over the task's, field by field. */
export function mergeDebounce(task: DebounceFields | undefined, own: DebounceFields): DebounceFields {
  return {
    debounce: own.debounce ?? task?.debounce,
    debounceKey: own.debounceKey ?? task?.debounceKey,
    debounceMaxWait: own.debounceMaxWait ?? task?.debounceMaxWait,
    debounceReplacePayload: own.debounceReplacePayload ?? task?.debounceReplacePayload,
  };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function keyPart(value: unknown, name: string, context: string): string {
  if (typeof value === "string") {
    if (value === "")
      throw new QueueError(
        `${context}: debounceKey placeholder {${name}} is empty (every such call would share one window)`,
      );
    return value;
  }
  if (
    (typeof value === "number" && Number.isFinite(value)) ||
    typeof value === "boolean" ||
    typeof value === "bigint"
  )
    return String(value);
  throw new QueueError(
    `${context}: debounceKey placeholder {${name}} is ${value === null ? "null" : typeof value}; a key part is a string, finite number, boolean or bigint`,
  );
}

/**
 * Resolves a key template against one call's arguments. A placeholder that names nothing throws:
 * silently sharing one window between unrelated calls is what the key exists to prevent.
 */
export function resolveDebounceKey(context: string, template: string, args: readonly unknown[]): string {
  return template.replace(/\{([^{}]*)\}/g, (_all, name: string) => {
    if (name === "") throw new QueueError(`${context}: debounceKey "${template}" has an empty {}`);
    if (/^\d+$/.test(name)) {
      const i = Number(name);
      if (i >= args.length)
        throw new QueueError(
          `${context}: debounceKey placeholder {${name}} is out of range (${args.length} argument(s))`,
        );
      return keyPart(args[i], name, context);
    }
    const holder = args.find((a) => isPlainObject(a) && Object.hasOwn(a, name));
    if (holder === undefined)
      throw new QueueError(
        `${context}: debounceKey placeholder {${name}} matches no argument (name a property of an object argument, or a position like {0})`,
      );
    return keyPart((holder as Record<string, unknown>)[name], name, context);
  });
}
