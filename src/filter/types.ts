/**
 * Static types ("natures" upstream) used by the checker, and the public type descriptors used to
 * declare an environment.
 */

export type Type =
  | { readonly k: "unknown"; readonly untyped?: true }
  | { readonly k: "nil" }
  | { readonly k: "bool" }
  | { readonly k: "int" }
  | { readonly k: "float" }
  | { readonly k: "string" }
  | { readonly k: "bytes" }
  | { readonly k: "time" }
  | { readonly k: "duration" }
  | { readonly k: "month" }
  | { readonly k: "weekday" }
  | { readonly k: "location" }
  | { readonly k: "array"; readonly elem: Type }
  | { readonly k: "map"; readonly key: Type; readonly elem: Type }
  | FuncType;

export interface FuncType {
  readonly k: "func";
  readonly params: readonly Type[];
  /** Element type of a trailing variadic parameter. */
  readonly variadic?: Type;
  readonly result: Type;
  /** Display form, e.g. "func(interface {}) string". */
  readonly display?: string;
}

export const UNKNOWN: Type = { k: "unknown" };
/**
 * Unknown with no type at all (upstream's empty nature), as opposed to `interface {}`: the type of
 * `$env`, of undeclared names and of operations on unknown values. Both are unknown to the
 * checker, but nothing is assignable to or from this one, so `c ? x : $env` is unknown while
 * `c ? x : obj.member` takes the type of `x`.
 */
export const NOTYPE: Type = { k: "unknown", untyped: true };
export const NIL: Type = { k: "nil" };
export const BOOL: Type = { k: "bool" };
export const INT: Type = { k: "int" };
export const FLOAT: Type = { k: "float" };
export const STRING: Type = { k: "string" };
export const BYTES: Type = { k: "bytes" };
export const TIME: Type = { k: "time" };
export const DURATION: Type = { k: "duration" };
export const MONTH: Type = { k: "month" };
export const WEEKDAY: Type = { k: "weekday" };
export const LOCATION: Type = { k: "location" };
export const ANY_ARRAY: Type = { k: "array", elem: UNKNOWN };
export const ANY_MAP: Type = { k: "map", key: STRING, elem: UNKNOWN };
export const ANY_KEY_MAP: Type = { k: "map", key: UNKNOWN, elem: UNKNOWN };

export function arrayOf(elem: Type): Type {
  return { k: "array", elem };
}

export function mapOf(elem: Type, key: Type = STRING): Type {
  return { k: "map", key, elem };
}

export function funcType(params: Type[], result: Type, variadic?: Type, display?: string): FuncType {
  return { k: "func", params, result, variadic, display };
}

export const isUnknown = (t: Type): boolean => t.k === "unknown";
export const isNil = (t: Type): boolean => t.k === "nil";
export const isBool = (t: Type): boolean => t.k === "bool";
export const isInteger = (t: Type): boolean => t.k === "int";
export const isFloat = (t: Type): boolean => t.k === "float";
export const isNumber = (t: Type): boolean => t.k === "int" || t.k === "float";
export const isString = (t: Type): boolean => t.k === "string";
export const isTime = (t: Type): boolean => t.k === "time";
export const isDuration = (t: Type): boolean => t.k === "duration";
export const isArray = (t: Type): boolean => t.k === "array" || t.k === "bytes";
export const isMap = (t: Type): boolean => t.k === "map";
export const isFunc = (t: Type): boolean => t.k === "func";

/** Element type of an array (int for bytes). */
export function elemOf(t: Type): Type {
  if (t.k === "array") return t.elem;
  if (t.k === "bytes") return INT;
  if (t.k === "map") return t.elem;
  return UNKNOWN;
}

export function keyOf(t: Type): Type {
  return t.k === "map" ? t.key : UNKNOWN;
}

/** Go reflect kind of a type, used where upstream compares kinds. */
export function goKind(t: Type): string {
  switch (t.k) {
    case "unknown":
      return "interface";
    case "nil":
      return "invalid";
    case "array":
    case "bytes":
      return "slice";
    case "duration":
      return "int64";
    case "month":
    case "weekday":
      return "int";
    case "time":
      return "struct";
    case "location":
      return "ptr";
    default:
      return t.k;
  }
}

export function sameType(a: Type, b: Type): boolean {
  if (a === b) return true;
  if (a.k !== b.k) return false;
  if (a.k === "array" && b.k === "array") return sameType(a.elem, b.elem);
  if (a.k === "map" && b.k === "map") return sameType(a.key, b.key) && sameType(a.elem, b.elem);
  if (a.k === "func" && b.k === "func") return typeName(a) === typeName(b);
  return true;
}

/** Go AssignableTo: identical types, or anything (including nil) to interface{}. */
export function assignable(from: Type, to: Type): boolean {
  if ((from.k === "unknown" && from.untyped) || (to.k === "unknown" && to.untyped)) return false;
  if (to.k === "unknown") return true;
  if (from.k === "nil") return false;
  return sameType(from, to);
}

/** Go's type spelling, used in error messages. */
export function typeName(t: Type): string {
  switch (t.k) {
    case "unknown":
      return "interface {}";
    case "nil":
      return "nil";
    case "float":
      return "float64";
    case "bytes":
      return "[]uint8";
    case "time":
      return "time.Time";
    case "duration":
      return "time.Duration";
    case "month":
      return "time.Month";
    case "weekday":
      return "time.Weekday";
    case "location":
      return "*time.Location";
    case "array":
      return `[]${typeName(t.elem)}`;
    case "map":
      return `map[${typeName(t.key)}]${typeName(t.elem)}`;
    case "func": {
      if (t.display) return t.display;
      const params = t.params.map(typeName);
      if (t.variadic) params.push(`...${typeName(t.variadic)}`);
      return `func(${params.join(", ")}) ${typeName(t.result)}`;
    }
    default:
      return t.k;
  }
}

/**
 * Public descriptor of a static type, used to declare an environment.
 *
 * - `"any"`: unknown until run time (checks move to run time, as for JSON members);
 * - `"nil"`, `"bool"`, `"int"`, `"float"`, `"string"`, `"bytes"`, `"time"`, `"duration"`;
 * - `{ array: T }`: an array of T (`[]T`);
 * - `{ map: T }`: a map with string keys and values of type T (`map[string]T`); a missing key
 *   reads as the zero value of T (`""` for strings, nil for `any`);
 * - `{ mapAnyKey: T }`: a map whose keys may have any type (`map[any]T`).
 */
export type FilterType =
  | "any"
  | "nil"
  | "bool"
  | "int"
  | "float"
  | "string"
  | "bytes"
  | "time"
  | "duration"
  | { readonly array: FilterType }
  | { readonly map: FilterType }
  | { readonly mapAnyKey: FilterType };

/** Converts a public descriptor into a checker type. */
export function fromDescriptor(d: FilterType): Type {
  if (typeof d === "string") {
    switch (d) {
      case "any":
        return UNKNOWN;
      case "nil":
        return NIL;
      case "bool":
        return BOOL;
      case "int":
        return INT;
      case "float":
        return FLOAT;
      case "string":
        return STRING;
      case "bytes":
        return BYTES;
      case "time":
        return TIME;
      case "duration":
        return DURATION;
    }
    throw new TypeError(`unknown filter type ${JSON.stringify(d)}`);
  }
  if ("array" in d) return arrayOf(fromDescriptor(d.array));
  if ("map" in d) return mapOf(fromDescriptor(d.map));
  if ("mapAnyKey" in d) return mapOf(fromDescriptor(d.mapAnyKey), UNKNOWN);
  throw new TypeError("invalid filter type descriptor");
}
