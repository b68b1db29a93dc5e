/**
 * Compiles a checked AST into a tree of JavaScript closures. Static types select specialised
 * closures (e.g. string equality is a plain `===`); `unknown` operands go through the generic
 * runtime operators. Variables and predicate pointers live in numbered slots of the run context.
 */
import type { ArrayNode, BuiltinNode, LetNode, MemberNode, Node, PredicateNode } from "./ast.js";
import { sortOrder } from "./builtins/collections.js";
import { BUILTINS } from "./builtins/registry.js";
import { FilterRuntimeError } from "./errors.js";
import { type CompiledRegex, compileRegex } from "./regex/matcher.js";
import type { Ctx } from "./runtime/context.js";
import * as ops from "./runtime/ops.js";
import {
  AnyKeyMap,
  GoFunc,
  goTypeName,
  type Int,
  intAdd,
  intMod,
  intMul,
  intNeg,
  intSub,
  isPlainMap,
  mkFloat,
  NIL_SLICE,
  type PlainMap,
  toF,
  type Value,
} from "./runtime/values.js";
import { methodsOfValue } from "./time/methods.js";
import { isArray, isBool, isInteger, isNumber, isString, type Type, UNKNOWN } from "./types.js";

export type Fn = (c: Ctx) => Value;

/** A user-supplied function callable from expressions. */
export interface RuntimeFunction {
  call: (args: Value[]) => Value;
}

export interface CompilerOptions {
  shortCircuit: boolean;
  optimize: boolean;
  functions: ReadonlyMap<string, RuntimeFunction>;
}

interface PredicateSlots {
  elem: number;
  index: number;
  acc: number;
}

/** Thrown by `?.` on nil and caught by the enclosing chain. */
const CHAIN_NIL = Symbol("chain-nil");

const t = (n: Node): Type => n.runtimeType ?? n.type ?? UNKNOWN;
const isStaticInt = (n: Node): boolean => isInteger(t(n));
const isStaticString = (n: Node): boolean => isString(t(n));
const isStaticBool = (n: Node): boolean => isBool(t(n));

/**
 * Stands for an element of a map being iterated. Upstream's loops take the length of any
 * collection (so a map of n keys runs n iterations) but cannot index a map: reading the element
 * (`#`, a kept element) is a run-time error, while a body that ignores it runs fine.
 */
const MAP_ELEMENT: Value = Object.freeze({ mapElement: true }) as unknown as Value;

/** The element as the loop body sees it; throws for a map's element (see {@link MAP_ELEMENT}). */
function element(v: Value): Value {
  if (v === MAP_ELEMENT) throw new FilterRuntimeError("reflect: call of reflect.Value.Index on map Value");
  return v;
}

const utf8 = new TextEncoder();

/**
 * The elements a predicate builtin loops over: an array's elements, a string's bytes (as ints),
 * bytes, or one {@link MAP_ELEMENT} per key of a map. Anything else has no length.
 */
function toArray(v: Value, name: string): Value[] {
  if (Array.isArray(v)) return v;
  if (typeof v === "string") return Array.from(utf8.encode(v));
  if (v instanceof Uint8Array) return Array.from(v);
  if (isPlainMap(v)) return new Array<Value>(Object.keys(v).length).fill(MAP_ELEMENT);
  if (v instanceof AnyKeyMap) return new Array<Value>(v.size).fill(MAP_ELEMENT);
  throw new FilterRuntimeError(`cannot iterate over ${goTypeName(v)} in ${name}`);
}

function predicateBool(v: Value): boolean {
  if (v === true || v === false) return v;
  throw new FilterRuntimeError(`interface conversion: interface {} is ${goTypeName(v)}, not bool`);
}

function condition(v: Value): boolean {
  if (v === true || v === false) return v;
  throw new FilterRuntimeError(`interface conversion: interface {} is ${goTypeName(v)}, not bool`);
}

/**
 * Reads an env variable: an own property of a plain object, or (for class instances, which may
 * expose variables as getters) any property of the object's class.
 */
function readEnv(c: Ctx, name: string): Value {
  const env = c.env;
  if (env === null) throw new FilterRuntimeError(`cannot fetch ${name} from <nil>`);
  if (!Object.hasOwn(env, name)) {
    const proto = Object.getPrototypeOf(env);
    if (proto === Object.prototype || proto === null || !(name in env)) return null;
  }
  const v = env[name];
  return v === undefined ? null : v;
}

export class Compiler {
  /** Number of slots used by lets and predicates. */
  slotCount = 0;
  private readonly letSlots = new Map<LetNode, number>();
  private readonly predSlots = new Map<PredicateNode, PredicateSlots>();

  constructor(private readonly opts: CompilerOptions) {}

  private slot(): number {
    return this.slotCount++;
  }

  compile(n: Node): Fn {
    if (n.deferredError !== undefined) {
      const message = n.deferredError;
      return () => {
        throw new FilterRuntimeError(message);
      };
    }
    switch (n.kind) {
      case "Nil":
        return () => null;
      case "Bool": {
        const v = n.value;
        return () => v;
      }
      case "Int": {
        const v = n.value;
        return () => v;
      }
      case "Float": {
        const v = mkFloat(n.value);
        return () => v;
      }
      case "String": {
        const v = n.value;
        return () => v;
      }
      case "Bytes": {
        const v = n.value;
        return () => v;
      }
      case "Constant": {
        const v = n.value;
        return () => v;
      }
      case "Identifier":
        return this.identifier(n);
      case "Pointer": {
        const slots = this.predSlots.get(n.scope as PredicateNode) as PredicateSlots;
        if (n.name === "") {
          const i = slots.elem;
          return (c) => {
            const v = c.s[i];
            if (v === MAP_ELEMENT) return element(v);
            return v;
          };
        }
        const i = n.name === "index" ? slots.index : slots.acc;
        return (c) => c.s[i];
      }
      case "Unary":
        return this.unary(n);
      case "Binary":
        return this.binary(n);
      case "Member":
        return this.member(n);
      case "Slice": {
        const base = this.compile(n.node);
        const from = n.from ? this.compile(n.from) : undefined;
        const to = n.to ? this.compile(n.to) : undefined;
        return (c) => ops.slice(base(c), from?.(c), to?.(c));
      }
      case "Chain": {
        const inner = this.compile(n.node);
        return (c) => {
          try {
            return inner(c);
          } catch (e) {
            if (e === CHAIN_NIL) return null;
            throw e;
          }
        };
      }
      case "Call":
        return this.call(n);
      case "Builtin":
        return this.builtin(n);
      case "Predicate":
        throw new Error("predicate outside a builtin");
      case "Conditional": {
        const cond = this.compile(n.cond);
        const a = this.compile(n.exp1);
        const b = this.compile(n.exp2);
        if (isStaticBool(n.cond)) return (c) => (cond(c) ? a(c) : b(c));
        return (c) => (condition(cond(c)) ? a(c) : b(c));
      }
      case "Array": {
        const items = n.nodes.map((x) => this.compile(x));
        const len = items.length;
        return (c) => {
          const out = new Array<Value>(len);
          for (let i = 0; i < len; i++) out[i] = (items[i] as Fn)(c);
          c.grow(len);
          return out;
        };
      }
      case "Map": {
        const pairs = n.pairs.map((p) => [this.compile(p.key), this.compile(p.value)] as const);
        const len = pairs.length;
        return (c) => {
          const m: PlainMap = {};
          for (const [k, v] of pairs) {
            const key = k(c);
            if (typeof key !== "string") {
              throw new FilterRuntimeError(
                `interface conversion: interface {} is ${goTypeName(key)}, not string`,
              );
            }
            const value = v(c);
            // A repeated key keeps its first value, as upstream builds the map from the last pair back.
            if (Object.hasOwn(m, key)) continue;
            if (key === "__proto__")
              Object.defineProperty(m, key, { value, enumerable: true, writable: true, configurable: true });
            else m[key] = value;
          }
          c.grow(len);
          return m;
        };
      }
      case "Pair":
        throw new Error("pair outside a map");
      case "Let": {
        const i = this.slot();
        this.letSlots.set(n, i);
        const value = this.compile(n.value);
        const body = this.compile(n.body);
        return (c) => {
          c.s[i] = value(c);
          return body(c);
        };
      }
      case "Sequence": {
        const items = n.nodes.map((x) => this.compile(x));
        return (c) => {
          let v: Value = null;
          for (const f of items) v = f(c);
          return v;
        };
      }
    }
  }

  private identifier(n: Node & { kind: "Identifier" }): Fn {
    if (n.binding) {
      const i = this.letSlots.get(n.binding) as number;
      return (c) => c.s[i];
    }
    if (n.name === "$env") return (c) => c.env as Value;
    if (n.funcRef === "function") {
      const fn = this.opts.functions.get(n.name) as RuntimeFunction;
      const v = new GoFunc(n.name, "func", (args) => fn.call(args));
      return () => v;
    }
    if (n.funcRef === "builtin") {
      const impl = BUILTINS.get(n.name);
      const name = n.name;
      return (c) => new GoFunc(name, "func", (args) => (impl ? impl.call(c, args) : null));
    }
    const name = n.name;
    // Fast path: a plain own property read; names that exist on Object.prototype need hasOwn.
    if (name in Object.prototype) return (c) => readEnv(c, name);
    return (c) => {
      const env = c.env;
      if (env === null) throw new FilterRuntimeError(`cannot fetch ${name} from <nil>`);
      const v = env[name];
      return v === undefined ? null : v;
    };
  }

  private unary(n: Node & { kind: "Unary" }): Fn {
    const x = this.compile(n.node);
    switch (n.op) {
      case "!":
      case "not":
        if (isStaticBool(n.node)) return (c) => !x(c);
        return (c) => !ops.toBool(x(c), "!");
      case "-":
        if (isStaticInt(n.node)) return (c) => intNeg(x(c) as Int);
        return (c) => ops.negate(x(c));
      default:
        return (c) => ops.plus(x(c));
    }
  }

  private binary(n: Node & { kind: "Binary" }): Fn {
    const op = n.op;
    if (op === "in" && this.opts.optimize) {
      const r = n.right;
      if (
        r.kind === "Binary" &&
        r.op === ".." &&
        r.left.kind === "Int" &&
        r.right.kind === "Int" &&
        isStaticInt(n.left)
      ) {
        // `x in 1..5` becomes `x >= 1 && x <= 5` (no range allocated), as upstream's optimizer does.
        const lo = r.left.value;
        const hi = r.right.value;
        const x = this.compile(n.left);
        return (c) => {
          const v = x(c) as Int;
          return v >= lo && v <= hi;
        };
      }
    }
    if (op === "matches") return this.matches(n);
    const l = this.compile(n.left);
    const r = this.compile(n.right);
    const ints = isStaticInt(n.left) && isStaticInt(n.right);
    const nums = isNumber(t(n.left)) && isNumber(t(n.right));
    const strs = isStaticString(n.left) && isStaticString(n.right);
    switch (op) {
      case "&&":
      case "and":
        if (!this.opts.shortCircuit) {
          return (c) => {
            const a = ops.toBool(l(c), "&&");
            const b = ops.toBool(r(c), "&&");
            return a && b;
          };
        }
        return (c) => {
          const a = l(c);
          if (a === true) return r(c);
          if (a === false) return false;
          return ops.toBool(a, "&&");
        };
      case "||":
      case "or":
        if (!this.opts.shortCircuit) {
          return (c) => {
            const a = ops.toBool(l(c), "||");
            const b = ops.toBool(r(c), "||");
            return a || b;
          };
        }
        return (c) => {
          const a = l(c);
          if (a === false) return r(c);
          if (a === true) return true;
          return ops.toBool(a, "||");
        };
      case "==":
        if (ints || strs || (isStaticBool(n.left) && isStaticBool(n.right))) return (c) => l(c) === r(c);
        return (c) => ops.equal(l(c), r(c));
      case "!=":
        if (ints || strs || (isStaticBool(n.left) && isStaticBool(n.right))) return (c) => l(c) !== r(c);
        return (c) => !ops.equal(l(c), r(c));
      case "<":
        if (ints) return (c) => (l(c) as Int) < (r(c) as Int);
        if (nums) return (c) => toF(l(c)) < toF(r(c));
        return (c) => ops.less(l(c), r(c));
      case ">":
        if (ints) return (c) => (l(c) as Int) > (r(c) as Int);
        if (nums) return (c) => toF(l(c)) > toF(r(c));
        return (c) => ops.more(l(c), r(c));
      case "<=":
        if (ints) return (c) => (l(c) as Int) <= (r(c) as Int);
        if (nums) return (c) => toF(l(c)) <= toF(r(c));
        return (c) => ops.lessOrEqual(l(c), r(c));
      case ">=":
        if (ints) return (c) => (l(c) as Int) >= (r(c) as Int);
        if (nums) return (c) => toF(l(c)) >= toF(r(c));
        return (c) => ops.moreOrEqual(l(c), r(c));
      case "+":
        if (ints) return (c) => intAdd(l(c) as Int, r(c) as Int);
        if (strs) return (c) => (l(c) as string) + (r(c) as string);
        if (nums) return (c) => mkFloat(toF(l(c)) + toF(r(c)));
        return (c) => ops.add(l(c), r(c));
      case "-":
        if (ints) return (c) => intSub(l(c) as Int, r(c) as Int);
        if (nums) return (c) => mkFloat(toF(l(c)) - toF(r(c)));
        return (c) => ops.sub(l(c), r(c));
      case "*":
        if (ints) return (c) => intMul(l(c) as Int, r(c) as Int);
        if (nums) return (c) => mkFloat(toF(l(c)) * toF(r(c)));
        return (c) => ops.mul(l(c), r(c));
      case "/":
        return (c) => ops.div(l(c), r(c));
      case "%":
        if (ints) return (c) => intMod(l(c) as Int, r(c) as Int);
        return (c) => ops.mod(l(c), r(c));
      case "**":
      case "^":
        return (c) => ops.pow(l(c), r(c));
      case "in":
        if (isStaticString(n.left) && t(n.right).k === "map") {
          return (c) => {
            const m = r(c);
            if (isPlainMap(m)) return Object.hasOwn(m, l(c) as string);
            return ops.inOp(l(c), m);
          };
        }
        return (c) => ops.inOp(l(c), r(c));
      case "contains":
        if (strs) return (c) => (l(c) as string).includes(r(c) as string);
        return (c) => ops.contains(l(c), r(c));
      case "startsWith":
        if (strs) return (c) => (l(c) as string).startsWith(r(c) as string);
        return (c) => ops.startsWith(l(c), r(c));
      case "endsWith":
        if (strs) return (c) => (l(c) as string).endsWith(r(c) as string);
        return (c) => ops.endsWith(l(c), r(c));
      case "..":
        return (c) => makeRange(c, l(c), r(c));
      case "??":
        return (c) => {
          const a = l(c);
          return a === null || a === undefined || a === NIL_SLICE ? r(c) : a;
        };
    }
    throw new Error(`unknown operator ${op}`);
  }

  private matches(n: Node & { kind: "Binary" }): Fn {
    const l = this.compile(n.left);
    const test = (re: CompiledRegex, v: Value): boolean => {
      if (typeof v === "string") return re.test(v);
      if (v === null || v === undefined) return false;
      if (v instanceof Uint8Array) return re.testBytes(v);
      throw new FilterRuntimeError(`interface conversion: interface {} is ${goTypeName(v)}, not string`);
    };
    if (n.right.kind === "String") {
      const re = compileRegex(n.right.value);
      return (c) => test(re, l(c));
    }
    const r = this.compile(n.right);
    return (c) => {
      const a = l(c);
      const p = r(c);
      if (a === null || a === undefined || p === null || p === undefined) return false;
      if (typeof p !== "string")
        throw new FilterRuntimeError(`interface conversion: interface {} is ${goTypeName(p)}, not string`);
      let re: CompiledRegex;
      try {
        re = compileRegex(p);
      } catch (e) {
        throw new FilterRuntimeError((e as Error).message);
      }
      return test(re, a);
    };
  }

  private member(n: MemberNode): Fn {
    // `$env.name` reads the env directly.
    if (
      n.node.kind === "Identifier" &&
      n.node.name === "$env" &&
      !n.node.binding &&
      n.property.kind === "String"
    ) {
      const name = n.property.value;
      const optional = n.optional;
      return (c) => {
        if (c.env === null) {
          if (optional) throw CHAIN_NIL;
          throw new FilterRuntimeError(`cannot fetch ${name} from <nil>`);
        }
        return readEnv(c, name);
      };
    }
    const base = this.compile(n.node);
    const baseType = t(n.node);
    const optional = n.optional;
    if (baseType.k === "map" && baseType.key.k === "string") {
      // A statically typed map: a missing key reads as the element type's zero value.
      const zero: Value = isString(baseType.elem) ? "" : null;
      if (n.property.kind === "String") {
        const key = n.property.value;
        return (c) => {
          const m = base(c);
          if (isPlainMap(m)) return Object.hasOwn(m, key) ? m[key] : zero;
          if (optional && (m === null || m === undefined)) throw CHAIN_NIL;
          return ops.fetch(m, key);
        };
      }
      const keyFn = this.compile(n.property);
      return (c) => {
        const m = base(c);
        if (optional && (m === null || m === undefined)) throw CHAIN_NIL;
        const k = keyFn(c);
        if (isPlainMap(m) && typeof k === "string") return Object.hasOwn(m, k) ? m[k] : zero;
        return ops.fetch(m, k);
      };
    }
    if (n.property.kind === "String") {
      const key = n.property.value;
      return (c) => {
        const m = base(c);
        if (optional && (m === null || m === undefined)) throw CHAIN_NIL;
        if (isPlainMap(m)) return ops.mapGet(m, key);
        return ops.fetch(m, key);
      };
    }
    const prop = this.compile(n.property);
    if (isArray(baseType) && !optional) {
      return (c) => {
        const a = base(c);
        const i = prop(c);
        if (Array.isArray(a) && typeof i === "number") {
          const j = i < 0 ? i + a.length : i;
          if (j >= 0 && j < a.length && Number.isInteger(j)) return a[j];
        }
        return ops.fetch(a, i);
      };
    }
    return (c) => {
      const m = base(c);
      if (optional && (m === null || m === undefined)) throw CHAIN_NIL;
      return ops.fetch(m, prop(c));
    };
  }

  private call(n: Node & { kind: "Call" }): Fn {
    const args = n.args.map((a) => this.compile(a));
    const evalArgs = (c: Ctx): Value[] => args.map((a) => a(c));
    const callee = n.callee;
    if (callee.kind === "Identifier" && callee.funcRef === "function" && !callee.binding) {
      const fn = this.opts.functions.get(callee.name) as RuntimeFunction;
      return (c) => fn.call(evalArgs(c));
    }
    if (callee.kind === "Member" && callee.method && callee.property.kind === "String") {
      const name = callee.property.value;
      const base = this.compile(callee.node);
      const optional = callee.optional;
      return (c) => {
        const self = base(c);
        if (optional && (self === null || self === undefined)) throw CHAIN_NIL;
        const m = methodsOfValue(self)?.get(name);
        if (m) return m.call(self, evalArgs(c));
        const f = ops.fetch(self, name);
        if (f instanceof GoFunc) return f.fn(evalArgs(c));
        throw new FilterRuntimeError(`cannot call ${name} on ${goTypeName(self)}`);
      };
    }
    const fnValue = this.compile(callee);
    return (c) => {
      const f = fnValue(c);
      if (f instanceof GoFunc) return f.fn(evalArgs(c));
      throw new FilterRuntimeError(`${goTypeName(f)} is not callable`);
    };
  }

  /** Compiles a predicate body with fresh slots for `#`, `#index` and `#acc`. */
  private predicate(p: Node): { body: Fn; slots: PredicateSlots } {
    const pred = p as PredicateNode;
    const slots = { elem: this.slot(), index: this.slot(), acc: this.slot() };
    this.predSlots.set(pred, slots);
    return { body: this.compile(pred.node), slots };
  }

  private builtin(n: BuiltinNode): Fn {
    const name = n.name;
    const args = n.args;
    switch (name) {
      case "all":
      case "any":
      case "none":
      case "one":
      case "filter":
      case "find":
      case "findIndex":
      case "findLast":
      case "findLastIndex":
        return this.boolLoop(name, this.compile(args[0] as Node), this.predicate(args[1] as Node));
      case "count": {
        const coll = this.compile(args[0] as Node);
        if (args.length === 1) {
          return (c) => {
            const arr = toArray(coll(c), name);
            let k = 0;
            for (const v of arr) if (predicateBool(element(v))) k++;
            c.work(arr.length);
            return k;
          };
        }
        return this.boolLoop(name, coll, this.predicate(args[1] as Node), n.threshold);
      }
      case "map": {
        const coll = this.compile(args[0] as Node);
        const { body, slots } = this.predicate(args[1] as Node);
        return (c) => {
          const arr = toArray(coll(c), name);
          const out = new Array<Value>(arr.length);
          for (let i = 0; i < arr.length; i++) {
            c.s[slots.elem] = arr[i];
            c.s[slots.index] = i;
            c.work(1);
            out[i] = body(c);
          }
          c.grow(out.length);
          return out;
        };
      }
      case "sum": {
        if (n.addsElements) return this.sumOfElements((args[0] as ArrayNode).nodes);
        const coll = this.compile(args[0] as Node);
        const pred = args.length > 1 ? this.predicate(args[1] as Node) : undefined;
        return (c) => {
          const arr = toArray(coll(c), name);
          let acc: Value = 0;
          for (let i = 0; i < arr.length; i++) {
            c.work(1);
            let v = arr[i] as Value;
            if (!pred) v = element(v);
            if (pred) {
              c.s[pred.slots.elem] = v;
              c.s[pred.slots.index] = i;
              v = pred.body(c);
            }
            acc = ops.add(acc, v);
          }
          return acc;
        };
      }
      case "groupBy": {
        const coll = this.compile(args[0] as Node);
        const { body, slots } = this.predicate(args[1] as Node);
        return (c) => {
          const arr = toArray(coll(c), name);
          const m = new AnyKeyMap(true);
          for (let i = 0; i < arr.length; i++) {
            c.work(1);
            c.s[slots.elem] = arr[i];
            c.s[slots.index] = i;
            const key = body(c);
            const item = element(arr[i] as Value);
            const group = m.get(key) as Value[] | undefined;
            if (group) group.push(item);
            else m.set(key, [item]);
          }
          return m;
        };
      }
      case "sortBy": {
        const coll = this.compile(args[0] as Node);
        const { body, slots } = this.predicate(args[1] as Node);
        const order = args.length > 2 ? this.compile(args[2] as Node) : undefined;
        return (c) => {
          const arr = toArray(coll(c), name);
          const keyed = arr.map((v, i) => {
            c.work(1);
            c.s[slots.elem] = v;
            c.s[slots.index] = i;
            return { k: body(c), v: element(v) };
          });
          const desc = order ? sortOrder(order(c)) : false;
          c.grow(keyed.length);
          c.work(keyed.length * Math.max(1, Math.ceil(Math.log2(keyed.length + 1))));
          keyed.sort((a, b) => {
            if (ops.less(a.k, b.k)) return desc ? 1 : -1;
            if (ops.less(b.k, a.k)) return desc ? -1 : 1;
            return 0;
          });
          return keyed.map((e) => e.v);
        };
      }
      case "reduce": {
        const coll = this.compile(args[0] as Node);
        const { body, slots } = this.predicate(args[1] as Node);
        const init = args.length > 2 ? this.compile(args[2] as Node) : undefined;
        return (c) => {
          const arr = toArray(coll(c), name);
          let acc: Value;
          let start = 0;
          if (init) {
            acc = init(c);
          } else {
            if (arr.length === 0) throw new FilterRuntimeError("reduce of empty array with no initial value");
            acc = element(arr[0] as Value);
            start = 1;
          }
          for (let i = start; i < arr.length; i++) {
            c.work(1);
            c.s[slots.elem] = arr[i];
            c.s[slots.index] = i;
            c.s[slots.acc] = acc;
            acc = body(c);
          }
          return acc;
        };
      }
    }
    const impl = BUILTINS.get(name);
    if (!impl) throw new Error(`unknown builtin ${name}`);
    const compiled = args.map((a) => this.compile(a));
    const baseType = args[0] ? t(args[0]) : UNKNOWN;
    if (name === "get" && baseType.k === "map" && isString(baseType.elem) && compiled.length === 2) {
      const [m, k] = compiled as [Fn, Fn];
      return (c) => {
        const mv = m(c);
        const kv = k(c);
        if (isPlainMap(mv) && typeof kv === "string") return Object.hasOwn(mv, kv) ? mv[kv] : "";
        return impl.call(c, [mv, kv]);
      };
    }
    if (compiled.length === 1) {
      const a0 = compiled[0] as Fn;
      return (c) => impl.call(c, [a0(c)]);
    }
    return (c) =>
      impl.call(
        c,
        compiled.map((a) => a(c)),
      );
  }

  /** `sum([a, b, c])` as upstream rewrites it: `a + (b + c)`, operands evaluated left to right. */
  private sumOfElements(nodes: Node[]): Fn {
    const items = nodes.map((x) => this.compile(x));
    const last = items.length - 1;
    return (c) => {
      const values = items.map((f) => f(c));
      let acc = values[last] as Value;
      for (let i = last - 1; i >= 0; i--) acc = ops.add(values[i] as Value, acc);
      return acc;
    };
  }

  private boolLoop(
    name: string,
    coll: Fn,
    pred: { body: Fn; slots: PredicateSlots },
    threshold = Number.POSITIVE_INFINITY,
  ): Fn {
    const { body, slots } = pred;
    const e = slots.elem;
    const ix = slots.index;
    const iterate = (
      c: Ctx,
      visit: (i: number, v: Value, r: boolean) => boolean | undefined,
      reverse = false,
    ) => {
      const arr = toArray(coll(c), name);
      const n = arr.length;
      for (let k = 0; k < n; k++) {
        const i = reverse ? n - 1 - k : k;
        const v = arr[i] as Value;
        c.s[e] = v;
        c.s[ix] = i;
        c.work(1);
        if (visit(i, v, predicateBool(body(c))) === true) return true;
      }
      return false;
    };
    switch (name) {
      case "all":
        return (c) => !iterate(c, (_i, _v, r) => !r);
      case "any":
        return (c) => iterate(c, (_i, _v, r) => r);
      case "none":
        return (c) => !iterate(c, (_i, _v, r) => r);
      case "one":
        return (c) => {
          let k = 0;
          iterate(c, (_i, _v, r) => {
            if (r) k++;
            return undefined;
          });
          return k === 1;
        };
      case "count":
        return (c) => {
          let k = 0;
          iterate(c, (_i, _v, r) => {
            if (r) k++;
            return k >= threshold ? true : undefined;
          });
          return k;
        };
      case "filter":
        return (c) => {
          const out: Value[] = [];
          iterate(c, (_i, v, r) => {
            if (r) out.push(element(v));
            return undefined;
          });
          c.grow(out.length);
          return out;
        };
      case "find":
      case "findLast":
      case "findIndex":
      case "findLastIndex": {
        const reverse = name === "findLast" || name === "findLastIndex";
        const wantIndex = name === "findIndex" || name === "findLastIndex";
        return (c) => {
          let found: Value = null;
          iterate(
            c,
            (i, v, r) => {
              if (!r) return undefined;
              found = wantIndex ? i : element(v);
              return true;
            },
            reverse,
          );
          return found;
        };
      }
    }
    throw new Error(`unknown predicate builtin ${name}`);
  }
}

function makeRange(c: Ctx, a: Value, b: Value): Value[] {
  if (
    !(typeof a === "number" || typeof a === "bigint") ||
    !(typeof b === "number" || typeof b === "bigint")
  ) {
    throw new FilterRuntimeError(`invalid operation: ${goTypeName(a)} .. ${goTypeName(b)}`);
  }
  if (typeof a === "number" && !Number.isInteger(a))
    throw new FilterRuntimeError("invalid operation: float64 .. int");
  if (typeof b === "number" && !Number.isInteger(b))
    throw new FilterRuntimeError("invalid operation: int .. float64");
  const lo = Number(a);
  const hi = Number(b);
  const size = hi - lo + 1;
  if (size <= 0) return [];
  c.grow(size);
  c.work(size);
  const out = new Array<Value>(size);
  for (let i = 0; i < size; i++) out[i] = lo + i;
  return out;
}
