/**
 * Constant folding, as upstream's optimizer does it: arithmetic, concatenation, comparison and
 * logic on literals, and all-constant array literals. Folding `1 % 0` is a compile error.
 */
import type { Node } from "./ast.js";
import { CompileFailure } from "./errors.js";
import { goPow } from "./runtime/ops.js";
import {
  type Int,
  intAdd,
  intMod,
  intMul,
  intNeg,
  intSub,
  mkFloat,
  toF,
  type Value,
} from "./runtime/values.js";

function literalValue(n: Node): { ok: true; v: Value } | { ok: false } {
  switch (n.kind) {
    case "Nil":
      return { ok: true, v: null };
    case "Bool":
    case "Int":
    case "String":
      return { ok: true, v: n.value };
    case "Float":
      return { ok: true, v: mkFloat(n.value) };
    case "Constant":
      return { ok: true, v: n.value };
    default:
      return { ok: false };
  }
}

function replaceWith(target: Node, n: Node): Node {
  n.pos = target.pos;
  n.type = target.type;
  return n;
}

const intLit = (n: Node): n is Node & { kind: "Int" } => n.kind === "Int";
const floatLit = (n: Node): n is Node & { kind: "Float" } => n.kind === "Float";
const numLit = (n: Node): boolean => intLit(n) || floatLit(n);

function foldBinary(n: Node & { kind: "Binary" }): Node {
  const { left: l, right: r, op } = n;
  if (intLit(l) && intLit(r)) {
    const a = l.value as Int;
    const b = r.value as Int;
    switch (op) {
      case "+":
        return replaceWith(n, { kind: "Int", value: intAdd(a, b), pos: n.pos });
      case "-":
        return replaceWith(n, { kind: "Int", value: intSub(a, b), pos: n.pos });
      case "*":
        return replaceWith(n, { kind: "Int", value: intMul(a, b), pos: n.pos });
      case "%":
        if (b === 0) throw new CompileFailure("integer divide by zero", n.pos);
        return replaceWith(n, { kind: "Int", value: intMod(a, b), pos: n.pos });
      case "/":
        return replaceWith(n, { kind: "Float", value: toF(a) / toF(b), pos: n.pos });
      case "**":
      case "^":
        return replaceWith(n, { kind: "Float", value: goPow(toF(a), toF(b)), pos: n.pos });
      case "==":
        return replaceWith(n, { kind: "Bool", value: a === b, pos: n.pos });
    }
  }
  if (numLit(l) && numLit(r)) {
    const a = toF((l as { value: number | bigint }).value);
    const b = toF((r as { value: number | bigint }).value);
    let v: number | undefined;
    switch (op) {
      case "+":
        v = a + b;
        break;
      case "-":
        v = a - b;
        break;
      case "*":
        v = a * b;
        break;
      case "/":
        v = a / b;
        break;
      case "**":
      case "^":
        v = goPow(a, b);
        break;
    }
    if (v !== undefined) return replaceWith(n, { kind: "Float", value: v, pos: n.pos });
  }
  if (l.kind === "String" && r.kind === "String") {
    if (op === "+") return replaceWith(n, { kind: "String", value: l.value + r.value, pos: n.pos });
    if (op === "==") return replaceWith(n, { kind: "Bool", value: l.value === r.value, pos: n.pos });
  }
  if (op === "&&" || op === "and" || op === "||" || op === "or") return foldLogic(n);
  if (l.kind === "Bool" && r.kind === "Bool" && op === "==") {
    return replaceWith(n, { kind: "Bool", value: l.value === r.value, pos: n.pos });
  }
  return n;
}

/**
 * Upstream folds a logical operator as soon as one side is a boolean literal, whatever the other
 * side is: `true && x` and `x && true` become `x`, `false && x` and `x && false` become `false`
 * (so `x` is never evaluated, even when it would fail); dually for `||`. The kept operand keeps
 * its own static type, so the compiler does not assume it is a bool.
 */
function foldLogic(n: Node & { kind: "Binary" }): Node {
  const { left: l, right: r } = n;
  const and = n.op === "&&" || n.op === "and";
  const lb = l.kind === "Bool" ? l.value : undefined;
  const rb = r.kind === "Bool" ? r.value : undefined;
  // The identity element (true for &&, false for ||) on the left keeps the right, and vice versa.
  if (lb === and) return keep(n, r);
  if (rb === and) return keep(n, l);
  if (lb === !and || rb === !and) return replaceWith(n, { kind: "Bool", value: !and, pos: n.pos });
  return n;
}

function keep(target: Node, operand: Node): Node {
  operand.pos = target.pos;
  return operand;
}

/** Folds constants bottom-up; returns the (possibly replaced) node. */
export function fold(node: Node): Node {
  switch (node.kind) {
    case "Unary": {
      node.node = fold(node.node);
      const x = node.node;
      if (node.op === "-" && x.kind === "Int")
        return replaceWith(node, { kind: "Int", value: intNeg(x.value), pos: node.pos });
      if (node.op === "-" && x.kind === "Float")
        return replaceWith(node, { kind: "Float", value: -x.value, pos: node.pos });
      if (node.op === "+" && (x.kind === "Int" || x.kind === "Float")) return replaceWith(node, { ...x });
      if ((node.op === "!" || node.op === "not") && x.kind === "Bool") {
        return replaceWith(node, { kind: "Bool", value: !x.value, pos: node.pos });
      }
      return node;
    }
    case "Binary": {
      inStringSet(node);
      node.left = fold(node.left);
      node.right = fold(node.right);
      const folded = foldBinary(node);
      return folded.kind === "Binary" ? countEarlyExit(folded) : folded;
    }
    case "Array": {
      node.nodes = node.nodes.map(fold);
      // Only arrays of number, string and bool literals become constants (not nil, not nested).
      const values: Value[] = [];
      for (const n of node.nodes) {
        if (n.kind !== "Int" && n.kind !== "Float" && n.kind !== "String" && n.kind !== "Bool") return node;
        values.push((literalValue(n) as { v: Value }).v);
      }
      if (values.length === 0) return node;
      return replaceWith(node, { kind: "Constant", value: values, pos: node.pos });
    }
    case "Member":
      node.node = fold(node.node);
      node.property = fold(node.property);
      return node;
    case "Slice":
      node.node = fold(node.node);
      if (node.from) node.from = fold(node.from);
      if (node.to) node.to = fold(node.to);
      return node;
    case "Chain":
    case "Predicate":
      node.node = fold(node.node);
      return node;
    case "Call":
      node.callee = fold(node.callee);
      node.args = node.args.map(fold);
      return node;
    case "Builtin":
      node.args = node.args.map(fold);
      return sumOfArrayLiteral(node);
    case "Conditional":
      node.cond = fold(node.cond);
      node.exp1 = fold(node.exp1);
      node.exp2 = fold(node.exp2);
      return node;
    case "Map":
      for (const p of node.pairs) {
        p.key = fold(p.key);
        p.value = fold(p.value);
      }
      return node;
    case "Let":
      node.value = fold(node.value);
      node.body = fold(node.body);
      return node;
    case "Sequence":
      node.nodes = node.nodes.map(fold);
      return node;
    default:
      return node;
  }
}

/**
 * `x in ["a", "b"]` (string literals only) looks `x` up in a set of strings, as upstream does,
 * unless `x` is statically an int: a non-string `x` is then a run-time error and nil looks up "".
 * The set is a plain map, whose `in` has exactly these semantics.
 */
function inStringSet(n: Node & { kind: "Binary" }): void {
  const r = n.right;
  if (n.op !== "in" || r.kind !== "Array" || r.nodes.length === 0) return;
  if (n.left.type?.k === "int" && r.nodes.every((x) => x.kind === "Int")) return;
  if (!r.nodes.every((x) => x.kind === "String")) return;
  const set: Record<string, Value> = Object.create(null);
  for (const x of r.nodes) set[(x as Node & { kind: "String" }).value] = true;
  n.right = replaceWith(r, { kind: "Constant", value: set, pos: r.pos });
}

/**
 * `sum([a, b, c])` over a non-constant array literal is `a + (b + c)`, as upstream rewrites it: so
 * it also concatenates strings, and it does not start from the int 0. The compiler evaluates the
 * elements and folds them from the right, without building a chain of nodes as deep as the array.
 */
function sumOfArrayLiteral(n: Node & { kind: "Builtin" }): Node {
  const arr = n.args[0];
  if (n.name === "sum" && n.args.length === 1 && arr?.kind === "Array" && arr.nodes.length >= 2) {
    n.addsElements = true;
  }
  return n;
}

/**
 * `count(arr, pred)` compared with an int literal stops counting once the comparison is decided
 * (`> 0` and `>= 1` become `any`), as upstream's optimizer does: a later failing element is then
 * never reached.
 */
function countEarlyExit(n: Node & { kind: "Binary" }): Node {
  const count = n.left;
  const limit = n.right;
  if (count.kind !== "Builtin" || count.name !== "count" || count.args.length !== 2) return n;
  if (limit.kind !== "Int" || typeof limit.value !== "number" || limit.value < 0) return n;
  const v = limit.value;
  if ((n.op === ">" && v === 0) || (n.op === ">=" && v === 1)) {
    return replaceWith(n, { kind: "Builtin", name: "any", args: count.args, pos: n.pos });
  }
  const threshold = n.op === ">" || n.op === "<=" ? v + 1 : n.op === ">=" || n.op === "<" ? v : 0;
  if (threshold > 1) count.threshold = threshold;
  return n;
}
