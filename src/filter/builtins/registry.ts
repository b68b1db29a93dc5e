/** All non-predicate builtins by name. Predicate builtins are handled by the checker and compiler. */
import { fetch } from "../runtime/ops.js";
import { COLLECTION_BUILTINS } from "./collections.js";
import { CONVERSION_BUILTINS } from "./conversion.js";
import { MATH_BUILTINS } from "./math.js";
import { STRING_BUILTINS } from "./strings.js";
import { TIME_BUILTINS } from "./time.js";
import type { Builtin } from "./types.js";

const GET: Builtin = {
  // Checked by the checker itself (it needs the argument nodes).
  check: () => {
    throw new Error("get is checked by the checker");
  },
  call: (_c, a) => {
    try {
      return fetch(a[0] ?? null, a[1] ?? null);
    } catch {
      return null;
    }
  },
};

export const BUILTINS: ReadonlyMap<string, Builtin> = new Map(
  Object.entries({
    ...STRING_BUILTINS,
    ...MATH_BUILTINS,
    ...CONVERSION_BUILTINS,
    ...COLLECTION_BUILTINS,
    ...TIME_BUILTINS,
    get: GET,
  }),
);
