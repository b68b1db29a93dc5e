/** Shape of a (non-predicate) builtin: a compile-time check and a runtime implementation. */
import type { Ctx } from "../runtime/context.js";
import type { Value } from "../runtime/values.js";
import type { Type } from "../types.js";

export interface Builtin {
  /** Returns the result type, or throws CheckError. */
  check(args: Type[]): Type;
  call(c: Ctx, args: Value[]): Value;
}
