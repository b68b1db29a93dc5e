/**
 * compile(): source → lexer → parser (node cap) → checker → constant folding → closures.
 */
import { forEachChild, type Node } from "./ast.js";
import { Checker } from "./checker.js";
import { Compiler, type Fn, type RuntimeFunction } from "./compiler.js";
import { CompileFailure, FilterCompileError, FilterRuntimeError } from "./errors.js";
import { fold } from "./optimizer.js";
import { parse } from "./parser.js";
import { Ctx } from "./runtime/context.js";
import {
  AnyKeyMap,
  Duration,
  floatToInt,
  GoFloat,
  GoMonth,
  GoWeekday,
  goTypeName,
  isFloatValue,
  isIntValue,
  isPlainMap,
  mkFloat,
  TYPED_STRING_MAP_PROTO,
  toF,
  type Value,
} from "./runtime/values.js";
import { GoTime } from "./time/go-time.js";
import { type Location, loadLocation } from "./time/zones.js";
import {
  ANY_ARRAY,
  ANY_KEY_MAP,
  ANY_MAP,
  BOOL,
  BYTES,
  DURATION,
  type FilterType,
  FLOAT,
  type FuncType,
  fromDescriptor,
  funcType,
  INT,
  isBool,
  isNumber,
  isUnknown,
  MONTH,
  mapOf,
  NIL,
  STRING,
  TIME,
  type Type,
  typeName,
  UNKNOWN,
  WEEKDAY,
} from "./types.js";

/** A function made available to expressions, with a static signature. */
export interface FilterFunction {
  /** Parameter types. */
  params: FilterType[];
  /** Type of a trailing variadic parameter, if any. */
  variadic?: FilterType;
  /** Result type. */
  result: FilterType;
  /** Implementation; receives runtime values and returns one. Throwing makes the run fail. */
  call: (...args: Value[]) => Value;
}

/** Default AST node cap of {@link compile} (upstream's `MaxNodes`). */
export const DEFAULT_MAX_NODES = 10_000;
/** Default source length cap of {@link compile}, in UTF-8 bytes. */
export const DEFAULT_MAX_SOURCE_BYTES = 1024 * 1024;
/** Default nesting limit of {@link compile}. */
export const DEFAULT_MAX_DEPTH = 500;

/** The result kinds a program can be required to produce. */
export type ExpectKind = "bool" | "int" | "int64" | "float64";

/** Options of {@link compile}. */
export interface CompileOptions {
  /**
   * Declared environment: variable name → type. Unknown names are compile errors. When omitted
   * (or null), no environment is declared: every name is allowed and has type `any`.
   * Use {@link inferEnvTypes} to derive it from a sample value, as upstream's `expr.Env(value)`.
   */
  env?: Readonly<Record<string, FilterType>> | null;
  /** Functions callable by name; they replace builtins of the same name. */
  functions?: Readonly<Record<string, FilterFunction>>;
  /** Required result kind: rejected at compile time when statically wrong, converted at run time. */
  expect?: ExpectKind;
  /** With `expect`, also reject a result whose static type is `any`. */
  warnOnAny?: boolean;
  /** Unknown names are allowed and evaluate to nil. */
  allowUndefinedVariables?: boolean;
  /** Constant folding (default true). */
  optimize?: boolean;
  /** AST node cap (default 10000, as upstream's `MaxNodes`); 0 disables it. */
  maxNodes?: number;
  /** Source length cap in UTF-8 bytes (default 1 MiB, {@link DEFAULT_MAX_SOURCE_BYTES}); 0 disables it. */
  maxSourceBytes?: number;
  /**
   * Nesting limit (default 500, {@link DEFAULT_MAX_DEPTH}): how deep parentheses, operands,
   * arguments and member chains may nest, counted while parsing and type checking. A deeper
   * expression is a compile error naming the limit, in every process state. 0 disables it (then
   * a very deep expression may fail on the JavaScript stack instead).
   */
  maxDepth?: number;
  /** Treat `if` and `else` as identifiers. */
  disableIfOperator?: boolean;
  /** `&&` and `||` skip their right operand when the left decides (default true). */
  shortCircuit?: boolean;
  /** Builtins that are not available. */
  disabledBuiltins?: readonly string[];
  /** Upstream's per-run memory budget (default 1,000,000 units). */
  memoryBudget?: number;
  /** Per-run work budget (loop iterations, elements produced; default 10,000,000). */
  maxSteps?: number;
  /** IANA zone used by now() and by date() without an explicit zone (default: local). */
  timezone?: string;
}

/** A compiled expression. */
export interface Program {
  /** The source text. */
  readonly source: string;
  /** Go spelling of the static result type (`bool`, `int`, `interface {}`, ...). */
  readonly resultType: string;
  /** Environment names the program reads; contains "$env" when it reads the whole environment. */
  readonly referencedNames: ReadonlySet<string>;
  /**
   * Evaluates the program. `env` maps variable names to values in the runtime representation
   * (see `runtime/values.ts`): integral JS numbers are ints, other numbers floats; wrap an
   * integral float as `new GoFloat(2)`; ints beyond 2^53 are bigints; times are `GoTime`,
   * durations `Duration`. A class instance may expose variables as getters. Throws only
   * {@link FilterRuntimeError}.
   */
  run(env?: Readonly<Record<string, Value>> | null): Value;
}

/** Static type of a runtime value, as upstream infers it from a sample environment. */
export function typeOfValue(v: Value): Type {
  if (v === null || v === undefined) return NIL;
  switch (typeof v) {
    case "boolean":
      return BOOL;
    case "number":
      return isIntValue(v) ? INT : FLOAT;
    case "bigint":
      return INT;
    case "string":
      return STRING;
  }
  if (v instanceof GoFloat) return FLOAT;
  if (Array.isArray(v)) return ANY_ARRAY;
  if (v instanceof Uint8Array) return BYTES;
  if (v instanceof GoTime) return TIME;
  if (v instanceof Duration) return DURATION;
  if (v instanceof GoMonth) return MONTH;
  if (v instanceof GoWeekday) return WEEKDAY;
  if (v instanceof AnyKeyMap) return ANY_KEY_MAP;
  if (isPlainMap(v)) return Object.getPrototypeOf(v) === TYPED_STRING_MAP_PROTO ? mapOf(STRING) : ANY_MAP;
  return UNKNOWN;
}

function descriptorOf(t: Type): FilterType {
  switch (t.k) {
    case "unknown":
    case "nil":
    case "bool":
    case "int":
    case "float":
    case "string":
    case "bytes":
    case "time":
    case "duration":
      return t.k === "unknown" ? "any" : t.k;
    case "array":
      return { array: descriptorOf(t.elem) };
    case "map":
      return t.key.k === "string" ? { map: descriptorOf(t.elem) } : { mapAnyKey: descriptorOf(t.elem) };
    default:
      return "any";
  }
}

/**
 * Derives declared types from a sample environment (like upstream's `expr.Env(sample)`): ints,
 * floats, strings, bools, arrays (`[]any`), objects (`map[string]any`), times, durations, bytes;
 * a null sample declares a variable of type nil.
 */
export function inferEnvTypes(sample: Readonly<Record<string, Value>>): Record<string, FilterType> {
  const out: Record<string, FilterType> = {};
  for (const k of Object.keys(sample)) out[k] = descriptorOf(typeOfValue(sample[k]));
  return out;
}

const STACK_MESSAGE = "expression is too deeply nested";

function internalMessage(e: unknown): string {
  if (e instanceof RangeError && /call stack/i.test(e.message)) return STACK_MESSAGE;
  if (e instanceof Error) return e.message;
  return String(e);
}

/** Builtins whose first argument is read in place (no zero-value or identity semantics escape). */
const DIRECT_BUILTINS = new Set(["len", "keys", "values", "get"]);

/**
 * Env names that may flow into positions whose static type is unknown (so their runtime
 * representation must carry its own type information). Member bases, `in` right operands and
 * a few builtins' first argument use the static type and do not count.
 */
function escapingNames(root: Node): Set<string> {
  const out = new Set<string>();
  const visit = (n: Node, direct: boolean): void => {
    if (n.kind === "Identifier" && !n.binding && !n.funcRef && !direct) out.add(n.name);
    switch (n.kind) {
      case "Member":
        visit(n.node, true);
        visit(n.property, false);
        return;
      case "Binary":
        visit(n.left, false);
        visit(n.right, n.op === "in");
        return;
      case "Builtin":
        n.args.forEach((a, i) => {
          visit(a, i === 0 && DIRECT_BUILTINS.has(n.name));
        });
        return;
    }
    forEachChild(n, (child) => visit(child, false));
  };
  visit(root, false);
  return out;
}

/**
 * For each env name used only as `name.key`, `name["key"]`, `name?.key` or `"key" in name` with
 * constant keys: those keys. A name used any other way (as a whole value, with a computed key)
 * maps to null. Lets a caller build such a variable partially: only the keys a program can see.
 */
function staticKeys(root: Node): Map<string, Set<string> | null> {
  const out = new Map<string, Set<string> | null>();
  const note = (name: string, key: string | null) => {
    const keys = out.get(name);
    if (keys === null) return;
    if (key === null) out.set(name, null);
    else if (keys) keys.add(key);
    else out.set(name, new Set([key]));
  };
  const isEnvName = (n: Node): n is Node & { kind: "Identifier" } =>
    n.kind === "Identifier" && !n.binding && !n.funcRef;
  const visit = (n: Node): void => {
    if (n.kind === "Member" && isEnvName(n.node) && !n.method) {
      note(n.node.name, n.property.kind === "String" ? n.property.value : null);
      if (n.property.kind !== "String") visit(n.property);
      return;
    }
    if (n.kind === "Binary" && n.op === "in" && isEnvName(n.right)) {
      note(n.right.name, n.left.kind === "String" ? n.left.value : null);
      if (n.left.kind !== "String") visit(n.left);
      return;
    }
    if (isEnvName(n)) note(n.name, null);
    forEachChild(n, visit);
  };
  visit(root);
  return out;
}

export class CompiledProgram implements Program {
  /** See {@link escapingNames}. */
  escaping: ReadonlySet<string> = new Set();
  /** See {@link staticKeys}. */
  keysRead: ReadonlyMap<string, ReadonlySet<string> | null> = new Map();

  constructor(
    readonly source: string,
    readonly resultType: string,
    readonly referencedNames: ReadonlySet<string>,
    private readonly fn: Fn,
    private readonly slots: number,
    private readonly memoryBudget: number,
    private readonly maxSteps: number,
    private readonly tz: Location | undefined,
    private readonly finish: ((v: Value) => Value) | undefined,
  ) {}

  /** A context kept for the next run (runs are synchronous; a nested run makes its own). */
  private spare: Ctx | undefined;

  run(env?: Readonly<Record<string, Value>> | null): Value {
    const e = (env ?? null) as Record<string, Value> | null;
    let c = this.spare;
    if (c) {
      this.spare = undefined;
      c.reset(e);
    } else {
      c = new Ctx(e, this.slots, this.memoryBudget, this.maxSteps, this.tz);
    }
    try {
      const v = this.fn(c);
      return this.finish ? this.finish(v) : v === undefined ? null : v;
    } catch (err) {
      if (err instanceof FilterRuntimeError) throw err;
      throw new FilterRuntimeError(internalMessage(err));
    } finally {
      c.env = null;
      this.spare = c;
    }
  }
}

function resultConverter(expect: ExpectKind | undefined): ((v: Value) => Value) | undefined {
  switch (expect) {
    case "bool":
      return (v) => {
        if (v === true || v === false) return v;
        if (v === null || v === undefined) return false;
        throw new FilterRuntimeError(`invalid operation: bool(${goTypeName(v)})`);
      };
    case "int":
    case "int64":
      return (v) => {
        if (isIntValue(v)) return v;
        if (isFloatValue(v)) return floatToInt(toF(v));
        throw new FilterRuntimeError(`invalid operation: int(${goTypeName(v)})`);
      };
    case "float64":
      return (v) => {
        if (isIntValue(v) || isFloatValue(v)) return mkFloat(toF(v));
        throw new FilterRuntimeError(`invalid operation: float64(${goTypeName(v)})`);
      };
    default:
      return undefined;
  }
}

function checkExpect(expect: ExpectKind | undefined, warnOnAny: boolean, t: Type, root: Node): void {
  if (!expect) return;
  if (isUnknown(t)) {
    if (warnOnAny) throw new CompileFailure(`expected ${expect}, but got interface {}`, root.pos);
    return;
  }
  const ok = expect === "bool" ? isBool(t) : isNumber(t);
  if (!ok) throw new CompileFailure(`expected ${expect}, but got ${typeName(t)}`, root.pos);
}

/**
 * Compiles an expression. Throws only {@link FilterCompileError}.
 *
 * @example
 * const p = compile('subject startsWith "orders." && n > 2', { env: { subject: "string", n: "int" }, expect: "bool" });
 * p.run({ subject: "orders.eu", n: 3 }); // true
 */
export function compile(source: string, options: CompileOptions = {}): Program {
  const src = typeof source === "string" ? source : "";
  try {
    if (typeof source !== "string") throw new CompileFailure("the expression must be a string", 0);
    const maxSourceBytes = options.maxSourceBytes ?? DEFAULT_MAX_SOURCE_BYTES;
    if (maxSourceBytes > 0 && Buffer.byteLength(source, "utf8") > maxSourceBytes) {
      throw new CompileFailure(`expression exceeds the maximum length of ${maxSourceBytes} bytes`, 0);
    }
    const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    const envDecl = options.env ?? undefined;
    const env = envDecl
      ? new Map(Object.entries(envDecl).map(([k, d]) => [k, fromDescriptor(d)] as const))
      : undefined;
    const functionTypes = new Map<string, FuncType>();
    const runtimeFunctions = new Map<string, RuntimeFunction>();
    for (const [name, f] of Object.entries(options.functions ?? {})) {
      functionTypes.set(
        name,
        funcType(
          f.params.map(fromDescriptor),
          fromDescriptor(f.result),
          f.variadic ? fromDescriptor(f.variadic) : undefined,
        ),
      );
      runtimeFunctions.set(name, { call: (args) => f.call(...args) });
    }
    const disabled = new Set(options.disabledBuiltins ?? []);
    const ast = parse(source, {
      maxNodes: options.maxNodes ?? DEFAULT_MAX_NODES,
      maxDepth,
      disableIfOperator: options.disableIfOperator ?? false,
      disabledBuiltins: disabled,
      isOverridden: (name) => (env?.has(name) ?? false) || functionTypes.has(name),
    });
    const checker = new Checker({
      env,
      strict: env !== undefined && !options.allowUndefinedVariables,
      functions: functionTypes,
      disabledBuiltins: disabled,
      maxDepth,
    });
    const resultType = checker.check(ast);
    checkExpect(options.expect, options.warnOnAny ?? false, resultType, ast);
    const optimize = options.optimize ?? true;
    const optimized = optimize ? fold(ast) : ast;
    const compiler = new Compiler({
      shortCircuit: options.shortCircuit ?? true,
      optimize,
      functions: runtimeFunctions,
    });
    const fn = compiler.compile(optimized);
    let tz: Location | undefined;
    if (options.timezone !== undefined) {
      try {
        tz = loadLocation(options.timezone);
      } catch (e) {
        throw new CompileFailure((e as Error).message, 0);
      }
    }
    const program = new CompiledProgram(
      source,
      typeName(resultType),
      checker.usedNames,
      fn,
      compiler.slotCount,
      options.memoryBudget ?? 1_000_000,
      options.maxSteps ?? 10_000_000,
      tz,
      resultConverter(options.expect),
    );
    program.escaping = escapingNames(optimized);
    program.keysRead = staticKeys(optimized);
    return program;
  } catch (e) {
    if (e instanceof FilterCompileError) throw e;
    if (e instanceof CompileFailure) throw new FilterCompileError(e.message, src, e.offset);
    throw new FilterCompileError(internalMessage(e), src, 0);
  }
}
