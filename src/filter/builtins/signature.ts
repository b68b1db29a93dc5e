/**
 * Compile-time argument checking for builtins declared with Go-style signatures (upstream's
 * `Types` overloads) and helpers shared by `Validate`-style checks.
 */
import { assignable, isArray, isNil, isNumber, isUnknown, type Type, typeName } from "../types.js";

/** Thrown by builtin checks; the checker adds the position. */
export class CheckError extends Error {}

/** A parameter kind: a concrete type, or "array" (any array) / "any". */
export type Param = Type | "array" | "any";

function paramName(p: Param): string {
  if (p === "any") return "interface {}";
  if (p === "array") return "[]interface {}";
  return typeName(p);
}

function accepts(p: Param, arg: Type): boolean {
  if (p === "any" || isUnknown(arg)) return true;
  if (p === "array") return isArray(arg);
  if (p.k === "float") return isNumber(arg);
  return assignable(arg, p);
}

/** Checks the arguments against one signature; throws CheckError. */
export function checkSignature(name: string, params: readonly Param[], args: readonly Type[]): void {
  if (args.length > params.length) throw new CheckError(`too many arguments to call ${name}`);
  if (args.length < params.length) throw new CheckError(`not enough arguments to call ${name}`);
  for (let i = 0; i < args.length; i++) {
    const p = params[i] as Param;
    const a = args[i] as Type;
    if (isNil(a)) {
      if (p === "any") continue;
      throw new CheckError(`cannot use nil as argument (type ${paramName(p)}) to call ${name}`);
    }
    if (!accepts(p, a))
      throw new CheckError(`cannot use ${typeName(a)} as argument (type ${paramName(p)}) to call ${name}`);
  }
}

/** Tries overloads in order; the last error wins when none matches. */
export function overloads(
  name: string,
  sigs: readonly (readonly Param[])[],
  result: Type,
  args: readonly Type[],
): Type {
  let last: CheckError | undefined;
  for (const params of sigs) {
    try {
      checkSignature(name, params, args);
      return result;
    } catch (e) {
      if (!(e instanceof CheckError)) throw e;
      last = e;
    }
  }
  throw last ?? new CheckError(`invalid arguments to call ${name}`);
}

/** Formats a type the way Go's `%s` of a reflect.Type does (nil prints as "%!s(<nil>)"). */
export function argName(t: Type): string {
  return isNil(t) ? "%!s(<nil>)" : typeName(t);
}

export function expectCount(args: readonly Type[], n: number): void {
  if (args.length !== n)
    throw new CheckError(`invalid number of arguments (expected ${n}, got ${args.length})`);
}
