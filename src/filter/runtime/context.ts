/**
 * Per-run evaluation state: environment, variable slots, and the budgets that bound memory and
 * work so every run terminates quickly.
 */
import { FilterRuntimeError } from "../errors.js";
import type { Location } from "../time/zones.js";
import type { Value } from "./values.js";

export class Ctx {
  /** Units allocated so far (upstream's memory budget accounting). */
  mem = 0;
  /** Loop iterations and other work units so far. */
  steps = 0;
  /** Slots for `let` variables and predicate pointers (`#`, `#index`, `#acc`). */
  readonly s: Value[];

  constructor(
    /** The environment object passed to run(), or null when none was given. */
    public env: Record<string, Value> | null,
    slotCount: number,
    readonly memBudget: number,
    readonly maxSteps: number,
    /** Zone for now() and for date() without a zone (the `timezone` compile option). */
    readonly tz: Location | undefined,
  ) {
    this.s = slotCount > 0 ? new Array<Value>(slotCount).fill(null) : EMPTY;
  }

  /** Accounts for `n` allocated units; exceeding the budget is a runtime error. */
  /** Prepares a finished context for another run. */
  reset(env: Record<string, Value> | null): void {
    this.env = env;
    this.mem = 0;
    this.steps = 0;
  }

  grow(n: number): void {
    this.mem += n;
    if (this.mem >= this.memBudget) throw new FilterRuntimeError("memory budget exceeded");
  }

  /** Accounts for `n` units of work (loop iterations, comparisons in sorts, ...). */
  work(n: number): void {
    this.steps += n;
    if (this.steps > this.maxSteps) throw new FilterRuntimeError("execution budget exceeded");
  }
}

const EMPTY: Value[] = [];
