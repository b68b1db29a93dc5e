import type { z } from "zod";

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  innerType?: z.ZodType;
  in?: z.ZodType;
  getter?: () => z.ZodType;
}

const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** `unwrap`'s answers: schemas are fixed, and every key of every request is folded against one. */
const unwrapped = new WeakMap<z.ZodType, Def>();

/** The schema under optional / nullable / default / pipe wrappers. */
function unwrap(schema: z.ZodType): Def {
  let def = unwrapped.get(schema);
  if (def === undefined) {
    def = unwrapDef(schema);
    unwrapped.set(schema, def);
  }
  return def;
}

function unwrapDef(schema: z.ZodType): Def {
  let def = defOf(schema);
  for (;;) {
    if (def.innerType) def = defOf(def.innerType);
    else if (def.type === "pipe" && def.in) def = defOf(def.in);
    else if (def.type === "lazy" && def.getter) def = defOf(def.getter());
    else return def;
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Matches a request's object keys to the schema's field names case-insensitively, as Go's
 * `encoding/json` does for the original's clients (`"Queue"` is `queue`): an exact name first,
 * otherwise the field whose name folds to the same; when two keys land on one field the later in
 * the document wins. Keys that match no field are left for the strict schema to refuse, and open
 * maps (properties) are data, never renamed. An object whose keys all match exactly (every request
 * of our own clients) is left as it is, without a copy.
 */
export function foldKeys(value: unknown, schema: z.ZodType): unknown {
  const def = unwrap(schema);
  if (def.type === "array" && def.element && Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = foldKeys(value[i], def.element);
    return value;
  }
  if (def.type !== "object" || !def.shape || !isPlainObject(value)) return value;
  const shape = def.shape;
  let exact = true;
  for (const key of Object.keys(value)) {
    if (!Object.hasOwn(shape, key)) {
      exact = false;
      break;
    }
  }
  if (exact) {
    for (const key of Object.keys(value)) value[key] = foldKeys(value[key], shape[key]!);
    return value;
  }
  const byFolded = new Map<string, string>();
  for (const name of Object.keys(shape)) byFolded.set(name.toLowerCase(), name);
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const name = Object.hasOwn(shape, key) ? key : (byFolded.get(key.toLowerCase()) ?? key);
    const field = Object.hasOwn(shape, name) ? shape[name] : undefined;
    // A data property even for "__proto__" (an unknown key the schema will refuse by name).
    Object.defineProperty(out, name, {
      value: field ? foldKeys(item, field) : item,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}
