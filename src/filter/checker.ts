/**
 * Type checker: computes the static type of every node from the declared environment and reports
 * the compile errors upstream's checker reports. `unknown` (interface{}) is compatible with
 * everything and defers checks to run time.
 */

import type { BuiltinNode, CallNode, LetNode, MemberNode, Node, PointerNode, PredicateNode } from "./ast.js";
import { forEachChild } from "./ast.js";
import { BUILTIN_NAMES, PREDICATE_BUILTINS } from "./builtins/names.js";
import { BUILTINS } from "./builtins/registry.js";
import { CheckError } from "./builtins/signature.js";
import { CompileFailure, LimitFailure } from "./errors.js";
import { nestingMessage } from "./parser.js";
import { parseRegex } from "./regex/parser.js";
import { methodsOfType } from "./time/methods.js";
import {
  ANY_ARRAY,
  ANY_MAP,
  arrayOf,
  assignable,
  BOOL,
  BYTES,
  DURATION,
  elemOf,
  FLOAT,
  type FuncType,
  funcType,
  goKind,
  INT,
  isArray,
  isBool,
  isDuration,
  isFloat,
  isFunc,
  isInteger,
  isMap,
  isNil,
  isNumber,
  isString,
  isTime,
  isUnknown,
  keyOf,
  NIL,
  NOTYPE,
  STRING,
  TIME,
  type Type,
  typeName,
  UNKNOWN,
} from "./types.js";

export interface CheckerConfig {
  /** Declared variables, or undefined when no environment is declared. */
  env: ReadonlyMap<string, Type> | undefined;
  /** Unknown names are errors (an env is declared and undefined variables are not allowed). */
  strict: boolean;
  functions: ReadonlyMap<string, FuncType>;
  disabledBuiltins: ReadonlySet<string>;
  /** Nesting limit on the AST's depth; 0 disables it. */
  maxDepth: number;
}

interface PredicateScope {
  node: PredicateNode;
  collection: Type;
  vars: ReadonlyMap<string, Type>;
}

const BUILTIN_VALUE_TYPE = funcType([], UNKNOWN, UNKNOWN, "func(...interface {}) interface {}");
const BUILTIN_VALUE_TYPES: Record<string, FuncType> = {
  string: funcType([UNKNOWN], STRING, undefined, "func(interface {}) string"),
};

type TypeFn = (t: Type) => boolean;

function allChildrenTyped(node: Node): boolean {
  let ok = true;
  forEachChild(node, (child) => {
    if (ok && (child.type === undefined || !allChildrenTyped(child))) ok = false;
  });
  return ok;
}

function anyOf(t: Type, fns: TypeFn[]): boolean {
  return fns.some((f) => f(t));
}

/** upstream `or`: both unknown, or one unknown and the other satisfies one of fns. */
function either(l: Type, r: Type, ...fns: TypeFn[]): boolean {
  if (isUnknown(l) && isUnknown(r)) return true;
  if (isUnknown(l) && anyOf(r, fns)) return true;
  if (isUnknown(r) && anyOf(l, fns)) return true;
  return false;
}

function isComparable(l: Type, r: Type): boolean {
  if (isUnknown(l) || isUnknown(r)) return true;
  if (isNil(l) || isNil(r)) return true;
  if (isNumber(l) && isNumber(r)) return true;
  if (isDuration(l) && isDuration(r)) return true;
  if (isTime(l) && isTime(r)) return true;
  if (isArray(l) && isArray(r)) return true;
  return assignable(l, r);
}

/** Numeric result of combining two number types: int only if both are int. */
function combined(l: Type, r: Type): Type {
  return isInteger(l) && isInteger(r) ? INT : FLOAT;
}

export class Checker {
  private lets: LetNode[] = [];
  /** > 0 while visiting a subtree upstream leaves unchecked. */
  private lenient = 0;
  /** Current depth of the AST walk, bounded by `maxDepth`. */
  private depth = 0;
  private predicates: PredicateScope[] = [];
  /** Env names referenced by the program; "$env" when the whole env is. */
  readonly usedNames = new Set<string>();

  constructor(private readonly cfg: CheckerConfig) {}

  private fail(node: Node, msg: string): never {
    throw new CompileFailure(msg, node.pos);
  }

  check(node: Node): Type {
    const t = this.visit(node);
    node.type = t;
    return t;
  }

  private visit(node: Node): Type {
    // Counted, so that every later pass (folding, compiling, running) recurses at most this deep
    // and the answer does not depend on how much stack the process has left.
    if (++this.depth > this.cfg.maxDepth && this.cfg.maxDepth > 0) {
      throw new LimitFailure(nestingMessage(this.cfg.maxDepth), node.pos);
    }
    try {
      if (this.lenient > 0) return this.visitLenient(node);
      const t = this.visitInner(node);
      node.type = t;
      return t;
    } finally {
      this.depth--;
    }
  }

  /**
   * Upstream does not type-check a sub-expression whose place has unknown type (the index of
   * `$env[...]`, the arguments of a call on an unknown value): it compiles it and lets the run
   * decide. Such subtrees are still visited, to bind lets, pointers and functions, but a type
   * error there is not a compile error. If the failing node's children were all visited, it
   * compiles as usual and the run reports the real type error; otherwise it compiles to a
   * run-time error carrying the checker's message.
   */
  private visitLenient(node: Node): Type {
    try {
      const t = this.visitInner(node);
      node.type = t;
      return t;
    } catch (e) {
      if (!(e instanceof CompileFailure) || e instanceof LimitFailure) throw e;
      node.type = NOTYPE;
      if (!allChildrenTyped(node)) node.deferredError = e.message;
      return NOTYPE;
    }
  }

  /** Visits a subtree whose types upstream leaves unchecked (see {@link visitLenient}). */
  private visitUnchecked(node: Node): void {
    this.lenient++;
    try {
      this.visit(node);
    } finally {
      this.lenient--;
    }
  }

  private visitInner(node: Node): Type {
    switch (node.kind) {
      case "Nil":
        return NIL;
      case "Bool":
        return BOOL;
      case "Int":
        return INT;
      case "Float":
        return FLOAT;
      case "String":
        return STRING;
      case "Bytes":
        return BYTES;
      case "Constant":
        return UNKNOWN;
      case "Identifier":
        return this.identifier(node);
      case "Pointer":
        return this.pointer(node);
      case "Unary":
        return this.unary(node.op, this.visit(node.node), node);
      case "Binary":
        return this.binary(node);
      case "Member":
        return this.member(node);
      case "Slice": {
        const t = this.visit(node.node);
        if (isUnknown(t)) {
          // Upstream does not check the bounds of a slice of an unknown value.
          for (const bound of [node.from, node.to]) if (bound) this.visitUnchecked(bound);
          return NOTYPE;
        }
        if (!(isString(t) || isArray(t))) this.fail(node, `cannot slice ${typeName(t)}`);
        for (const bound of [node.from, node.to]) {
          if (!bound) continue;
          const b = this.visit(bound);
          if (!isInteger(b) && !isUnknown(b)) this.fail(bound, `non-integer slice index ${typeName(b)}`);
        }
        return t;
      }
      case "Chain":
        return this.visit(node.node);
      case "Call":
        return this.call(node);
      case "Builtin":
        return this.builtin(node);
      case "Predicate":
        return funcType([UNKNOWN], this.visit(node.node));
      case "Conditional": {
        const c = this.visit(node.cond);
        if (!isBool(c) && !isUnknown(c)) {
          this.fail(node.cond, `non-bool expression (type ${typeName(c)}) used as condition`);
        }
        const t1 = this.visit(node.exp1);
        const t2 = this.visit(node.exp2);
        if (isNil(t1) && !isNil(t2)) return t2;
        if (!isNil(t1) && isNil(t2)) return t1;
        if (isNil(t1) && isNil(t2)) return NIL;
        if (assignable(t1, t2)) {
          if (isArray(t1) && isArray(t2)) {
            const e1 = elemOf(t1);
            const e2 = elemOf(t2);
            if (!assignable(e1, e2) || !assignable(e2, e1)) return ANY_ARRAY;
          }
          return t1;
        }
        return NOTYPE;
      }
      case "Array": {
        let prev: Type = UNKNOWN;
        let same = true;
        node.nodes.forEach((n, i) => {
          const cur = this.visit(n);
          if (i > 0 && goKind(cur) !== goKind(prev)) same = false;
          prev = cur;
        });
        return same ? arrayOf(prev) : ANY_ARRAY;
      }
      case "Map":
        for (const p of node.pairs) this.visit(p);
        return ANY_MAP;
      case "Pair":
        this.visit(node.key);
        this.visit(node.value);
        return NIL;
      case "Let":
        return this.letNode(node);
      case "Sequence": {
        let last: Type = NIL;
        for (const n of node.nodes) last = this.visit(n);
        return last;
      }
    }
  }

  private lookupLet(name: string): LetNode | undefined {
    for (let i = this.lets.length - 1; i >= 0; i--) {
      const l = this.lets[i] as LetNode;
      if (l.name === name) return l;
    }
    return undefined;
  }

  private identifier(node: Node & { kind: "Identifier" }): Type {
    const binding = this.lookupLet(node.name);
    if (binding) {
      node.binding = binding;
      if (binding.value.runtimeType) node.runtimeType = binding.value.runtimeType;
      return binding.value.type ?? UNKNOWN;
    }
    if (node.name === "$env") {
      // Upstream gives `$env` no static type: used as a value it is `any`.
      this.usedNames.add("$env");
      return NOTYPE;
    }
    return this.ident(node, node.name, this.cfg.strict, true);
  }

  /** Resolves a top-level name: env, then functions, then builtins. */
  private ident(
    node: Node & { kind: "Identifier" | "Member" },
    name: string,
    strict: boolean,
    builtins: boolean,
  ): Type {
    const envType = this.cfg.env?.get(name);
    if (envType) {
      this.usedNames.add(name);
      return envType;
    }
    if (builtins) {
      const fn = this.cfg.functions.get(name);
      if (fn) {
        if (node.kind === "Identifier") node.funcRef = "function";
        return fn;
      }
      if (BUILTIN_NAMES.has(name) && !this.cfg.disabledBuiltins.has(name)) {
        if (node.kind === "Identifier") node.funcRef = "builtin";
        return BUILTIN_VALUE_TYPES[name] ?? BUILTIN_VALUE_TYPE;
      }
    }
    if (this.cfg.strict && strict && this.lenient === 0) this.fail(node, `unknown name ${name}`);
    this.usedNames.add(name);
    return NOTYPE;
  }

  private pointer(node: PointerNode): Type {
    const scope = this.predicates[this.predicates.length - 1];
    if (!scope) this.fail(node, "cannot use pointer accessor outside predicate");
    node.scope = scope.node;
    if (node.name === "") {
      if (isUnknown(scope.collection)) return NOTYPE;
      if (isArray(scope.collection)) return elemOf(scope.collection);
      this.fail(node, `cannot use ${typeName(scope.collection)} as array`);
    }
    const t = scope.vars.get(node.name);
    if (t) return t;
    this.fail(node, `unknown pointer #${node.name}`);
  }

  private unary(op: string, t: Type, node: Node): Type {
    switch (op) {
      case "!":
      case "not":
        if (isBool(t) || isUnknown(t)) return BOOL;
        break;
      case "+":
      case "-":
        if (isNumber(t)) return t;
        if (isUnknown(t)) return NOTYPE;
        break;
    }
    this.fail(node, `invalid operation: ${op} (mismatched type ${typeName(t)})`);
  }

  private binary(node: Node & { kind: "Binary" }): Type {
    const l = this.visit(node.left);
    const r = this.visit(node.right);
    const op = node.op;
    switch (op) {
      case "==":
      case "!=":
        if (isComparable(l, r)) return BOOL;
        break;
      case "or":
      case "||":
      case "and":
      case "&&":
        if (isBool(l) && isBool(r)) return BOOL;
        if (either(l, r, isBool)) return BOOL;
        break;
      case "<":
      case ">":
      case ">=":
      case "<=":
        if (isNumber(l) && isNumber(r)) return BOOL;
        if (isString(l) && isString(r)) return BOOL;
        if (isTime(l) && isTime(r)) return BOOL;
        if (isDuration(l) && isDuration(r)) return BOOL;
        if (either(l, r, isNumber, isString, isTime, isDuration)) return BOOL;
        break;
      case "-":
        if (isNumber(l) && isNumber(r)) return combined(l, r);
        if (isTime(l) && isTime(r)) return DURATION;
        if (isTime(l) && isDuration(r)) return TIME;
        if (isDuration(l) && isDuration(r)) return DURATION;
        if (either(l, r, isNumber, isTime, isDuration)) return NOTYPE;
        break;
      case "*":
        if (isNumber(l) && isNumber(r)) return combined(l, r);
        if (isNumber(l) && isDuration(r)) return DURATION;
        if (isDuration(l) && isNumber(r)) return DURATION;
        if (isDuration(l) && isDuration(r)) return DURATION;
        if (either(l, r, isNumber, isDuration)) return NOTYPE;
        break;
      case "/":
      case "**":
      case "^":
        if (isNumber(l) && isNumber(r)) return FLOAT;
        if (either(l, r, isNumber)) return FLOAT;
        break;
      case "%":
        if (isInteger(l) && isInteger(r)) return INT;
        if (either(l, r, isInteger)) return INT;
        break;
      case "+":
        if (isNumber(l) && isNumber(r)) return combined(l, r);
        if (isString(l) && isString(r)) return STRING;
        if (isTime(l) && isDuration(r)) return TIME;
        if (isDuration(l) && isTime(r)) return TIME;
        if (isDuration(l) && isDuration(r)) return DURATION;
        if (either(l, r, isNumber, isString, isTime, isDuration)) return NOTYPE;
        break;
      case "in":
        if (isMap(r)) {
          if (!isUnknown(l) && !assignable(l, keyOf(r))) {
            this.fail(node, `cannot use ${typeName(l)} as type ${typeName(keyOf(r))} in map key`);
          }
          return BOOL;
        }
        if (isArray(r)) {
          if (!isComparable(l, elemOf(r))) {
            this.fail(node, `cannot use ${typeName(l)} as type ${typeName(elemOf(r))} in array`);
          }
          return BOOL;
        }
        if (isUnknown(l) && anyOf(r, [isString, isArray, isMap])) return BOOL;
        if (isUnknown(r)) return BOOL;
        break;
      case "matches":
        if (node.right.kind === "String") {
          try {
            parseRegex(node.right.value);
          } catch (e) {
            this.fail(node, (e as Error).message);
          }
        }
        if ((isString(l) || l.k === "bytes") && isString(r)) return BOOL;
        if (either(l, r, isString)) return BOOL;
        break;
      case "contains":
      case "startsWith":
      case "endsWith":
        if (isString(l) && isString(r)) return BOOL;
        if (either(l, r, isString)) return BOOL;
        break;
      case "..":
        if (isInteger(l) && isInteger(r)) return arrayOf(INT);
        if (either(l, r, isInteger)) return arrayOf(INT);
        break;
      case "??":
        if (isNil(l) && !isNil(r)) return r;
        if (!isNil(l) && isNil(r)) return l;
        if (isNil(l) && isNil(r)) return NIL;
        if (assignable(r, l)) return l;
        return NOTYPE;
      default:
        this.fail(node, `unknown operator (${op})`);
    }
    this.fail(node, `invalid operation: ${op} (mismatched types ${typeName(l)} and ${typeName(r)})`);
  }

  private member(node: MemberNode): Type {
    if (node.node.kind === "Identifier" && node.node.name === "$env" && !this.lookupLet("$env")) {
      node.node.type = NOTYPE;
      if (node.property.kind === "String") {
        node.property.type = STRING;
        const strict = node.optional ? false : this.cfg.strict;
        const name = node.property.value;
        if (this.cfg.env?.has(name)) this.usedNames.add(name);
        else this.usedNames.add("$env");
        return this.ident(node, name, strict, false);
      }
      this.usedNames.add("$env");
      this.visitUnchecked(node.property);
      return NOTYPE;
    }
    const base = this.visit(node.node);
    const prop = this.visit(node.property);
    if (node.property.kind === "String") {
      const name = node.property.value;
      if (isNil(base)) this.fail(node, `type nil has no field ${name}`);
      const method = methodsOfType(base)?.get(name);
      if (method) return method.type;
    }
    switch (base.k) {
      case "unknown":
        return NOTYPE;
      case "map":
        if (!assignable(prop, base.key) && !isUnknown(prop)) {
          this.fail(node.property, `cannot use ${typeName(prop)} to get an element from ${typeName(base)}`);
        }
        return base.elem;
      case "array":
      case "bytes":
        if (!isInteger(prop) && !isUnknown(prop)) {
          this.fail(
            node.property,
            `array elements can only be selected using an integer (got ${typeName(prop)})`,
          );
        }
        return elemOf(base);
    }
    if (node.property.kind === "String") {
      const what = node.method ? "method" : "field";
      this.fail(node, `type ${typeName(base)} has no ${what} ${node.property.value}`);
    }
    this.fail(node, `type ${typeName(base)}[${typeName(prop)}] is undefined`);
  }

  private call(node: CallNode): Type {
    const callee = node.callee;
    if (callee.kind === "Identifier" && !this.lookupLet(callee.name) && !this.cfg.env?.has(callee.name)) {
      const fn = this.cfg.functions.get(callee.name);
      if (fn) {
        callee.funcRef = "function";
        callee.type = fn;
        return this.checkArguments(callee.name, fn, node.args);
      }
    }
    if (callee.kind === "Identifier" && callee.name === "$env" && !this.lookupLet("$env")) {
      this.fail(node, "$env is not callable");
    }
    const fn = this.visit(callee);
    if (isUnknown(fn)) {
      // Upstream does not check the arguments of a call on an unknown value.
      for (const a of node.args) this.visitUnchecked(a);
      return NOTYPE;
    }
    if (isFunc(fn)) {
      let name = "function";
      if (callee.kind === "Identifier") name = callee.name;
      if (callee.kind === "Member" && callee.property.kind === "String") name = callee.property.value;
      return this.checkArguments(name, fn as FuncType, node.args);
    }
    this.fail(node, `${typeName(fn)} is not callable`);
  }

  private checkArguments(name: string, fn: FuncType, args: Node[]): Type {
    const n = fn.params.length;
    const types = args.map((a) => this.visit(a));
    if (fn.variadic) {
      if (args.length < n) this.fail(args[0] ?? ({ pos: 0 } as Node), `not enough arguments to call ${name}`);
    } else {
      if (args.length > n) this.fail(args[n] as Node, `too many arguments to call ${name}`);
      if (args.length < n) this.fail(args[0] ?? ({ pos: 0 } as Node), `not enough arguments to call ${name}`);
    }
    types.forEach((t, i) => {
      const param = (i < n ? fn.params[i] : fn.variadic) as Type;
      const arg = args[i] as Node;
      if (isFloat(param) && isInteger(t)) return;
      if (isNil(t)) {
        if (isUnknown(param)) return;
        this.fail(arg, `cannot use nil as argument (type ${typeName(param)}) to call ${name}`);
      }
      if (!assignable(t, param) && !isUnknown(t)) {
        this.fail(arg, `cannot use ${typeName(t)} as argument (type ${typeName(param)}) to call ${name}`);
      }
    });
    return fn.result;
  }

  private letNode(node: LetNode): Type {
    const name = node.name;
    if (this.cfg.env?.has(name)) this.fail(node, `cannot redeclare ${name}`);
    if (BUILTIN_NAMES.has(name) || this.cfg.functions.has(name))
      this.fail(node, `cannot redeclare builtin ${name}`);
    if (this.lookupLet(name)) this.fail(node, `cannot redeclare variable ${name}`);
    this.visit(node.value);
    this.lets.push(node);
    try {
      return this.visit(node.body);
    } finally {
      this.lets.pop();
    }
  }

  /** Visits a predicate argument with `#` bound to the collection's elements. */
  private predicate(owner: string, arg: Node, collection: Type, vars: Record<string, Type> = {}): FuncType {
    if (arg.kind !== "Predicate") this.fail(arg, "predicate should has one input and one output param");
    arg.owner = owner;
    this.predicates.push({ node: arg, collection, vars: new Map(Object.entries(vars)) });
    // Lets declared outside stay visible; lets inside the predicate are scoped to it.
    const letDepth = this.lets.length;
    try {
      return this.visit(arg) as FuncType;
    } finally {
      this.predicates.pop();
      this.lets.length = letDepth;
    }
  }

  private collection(node: BuiltinNode): Type {
    const c = this.visit(node.args[0] as Node);
    if (!isArray(c) && !isUnknown(c)) {
      this.fail(node.args[0] as Node, `builtin ${node.name} takes only array (got ${typeName(c)})`);
    }
    return c;
  }

  private boolPredicate(node: BuiltinNode, collection: Type): void {
    const closure = this.predicate(node.name, node.args[1] as Node, collection);
    const out = closure.result;
    if (!isBool(out) && !isUnknown(out)) {
      this.fail(node.args[1] as Node, `predicate should return boolean (got ${typeName(out)})`);
    }
  }

  private builtin(node: BuiltinNode): Type {
    const name = node.name;
    if (PREDICATE_BUILTINS.has(name)) {
      const collection = this.collection(node);
      const elem = isUnknown(collection) ? UNKNOWN : elemOf(collection);
      switch (name) {
        case "all":
        case "none":
        case "any":
        case "one":
          this.boolPredicate(node, collection);
          return BOOL;
        case "filter":
          this.boolPredicate(node, collection);
          return isUnknown(collection) ? ANY_ARRAY : arrayOf(elem);
        case "map": {
          const closure = this.predicate(name, node.args[1] as Node, collection, { index: INT });
          return arrayOf(closure.result);
        }
        case "count":
          if (node.args.length === 1) return INT;
          this.boolPredicate(node, collection);
          return INT;
        case "sum":
          if (node.args.length === 2) return this.predicate(name, node.args[1] as Node, collection).result;
          return isUnknown(collection) ? NOTYPE : elem;
        case "find":
        case "findLast":
          this.boolPredicate(node, collection);
          return isUnknown(collection) ? NOTYPE : elem;
        case "findIndex":
        case "findLastIndex":
          this.boolPredicate(node, collection);
          return INT;
        case "groupBy":
          this.predicate(name, node.args[1] as Node, collection);
          return { k: "map", key: UNKNOWN, elem: ANY_ARRAY };
        case "sortBy":
          this.predicate(name, node.args[1] as Node, collection);
          if (node.args[2]) this.visit(node.args[2]);
          return collection;
        case "reduce": {
          const closure = this.predicate(name, node.args[1] as Node, collection, {
            index: INT,
            acc: NOTYPE,
          });
          if (node.args[2]) this.visit(node.args[2]);
          return closure.result;
        }
      }
    }
    if (name === "get") return this.checkGet(node);
    const impl = BUILTINS.get(name);
    if (!impl) this.fail(node, `unknown builtin ${name}`);
    const types = node.args.map((a) => this.visit(a));
    try {
      const result = impl.check(types);
      if ((name === "mean" || name === "median") && !isUnknown(result)) node.runtimeType = FLOAT;
      return result;
    } catch (e) {
      if (e instanceof CheckError) this.fail(node, e.message);
      throw e;
    }
  }

  private checkGet(node: BuiltinNode): Type {
    if (node.args.length !== 2) {
      for (const a of node.args) this.visit(a);
      this.fail(node, `invalid number of arguments (expected 2, got ${node.args.length})`);
    }
    const [baseNode, propNode] = node.args as [Node, Node];
    const base = this.visit(baseNode);
    const prop = this.visit(propNode);
    if (baseNode.kind === "Identifier" && baseNode.name === "$env" && !baseNode.binding) {
      if (propNode.kind === "String") {
        const t = this.cfg.env?.get(propNode.value);
        if (t) return t;
      }
      return NOTYPE;
    }
    if (isUnknown(base)) return NOTYPE;
    if (isArray(base)) {
      if (!isInteger(prop) && !isUnknown(prop))
        this.fail(propNode, `non-integer slice index ${typeName(prop)}`);
      return elemOf(base);
    }
    if (isMap(base)) {
      if (!assignable(prop, keyOf(base)) && !isUnknown(prop)) {
        this.fail(propNode, `cannot use ${typeName(prop)} to get an element from ${typeName(base)}`);
      }
      return elemOf(base);
    }
    this.fail(baseNode, `type ${typeName(base)} does not support indexing`);
  }
}
