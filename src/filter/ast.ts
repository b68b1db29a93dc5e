/**
 * AST of the expr language. Node shapes follow upstream's so that node counting, optional chains
 * and builtin resolution behave the same.
 */
import type { Value } from "./runtime/values.js";
import type { Type } from "./types.js";

interface Base {
  /** Source offset, for error positions. */
  pos: number;
  /** Static type, set by the checker. */
  type?: Type;
  /**
   * Set by the checker on a node of an unchecked subtree that it could not type: the node
   * compiles to a run-time error with this message.
   */
  deferredError?: string;
  /**
   * Set by the checker where upstream's static type is not the run-time one (`mean(1)` is typed
   * int but gives a float): the compiler specialises on this type instead.
   */
  runtimeType?: Type;
}

export interface NilNode extends Base {
  kind: "Nil";
}
export interface BoolNode extends Base {
  kind: "Bool";
  value: boolean;
}
export interface IntNode extends Base {
  kind: "Int";
  value: number | bigint;
}
export interface FloatNode extends Base {
  kind: "Float";
  value: number;
}
export interface StringNode extends Base {
  kind: "String";
  value: string;
}
export interface BytesNode extends Base {
  kind: "Bytes";
  value: Uint8Array;
}
/** A value computed at compile time by constant folding. */
export interface ConstantNode extends Base {
  kind: "Constant";
  value: Value;
}
export interface IdentifierNode extends Base {
  kind: "Identifier";
  name: string;
  /** Set by the checker when the name refers to a `let` variable. */
  binding?: LetNode;
  /** Set by the checker when the name is a builtin or env function used as a value. */
  funcRef?: "builtin" | "function";
}
/** `#`, `#index`, `#acc`, and the implicit `#` of `.field` inside predicates. */
export interface PointerNode extends Base {
  kind: "Pointer";
  name: string;
  /** Set by the checker: the predicate the pointer belongs to. */
  scope?: PredicateNode;
}
export interface UnaryNode extends Base {
  kind: "Unary";
  op: string;
  node: Node;
}
export interface BinaryNode extends Base {
  kind: "Binary";
  op: string;
  left: Node;
  right: Node;
}
export interface MemberNode extends Base {
  kind: "Member";
  node: Node;
  property: Node;
  optional: boolean;
  method: boolean;
}
export interface SliceNode extends Base {
  kind: "Slice";
  node: Node;
  from?: Node;
  to?: Node;
}
/** Marks the end of an optional chain: a `?.` that meets nil jumps here with nil. */
export interface ChainNode extends Base {
  kind: "Chain";
  node: Node;
}
export interface CallNode extends Base {
  kind: "Call";
  callee: Node;
  args: Node[];
}
export interface BuiltinNode extends Base {
  kind: "Builtin";
  name: string;
  args: Node[];
  /** Set by the optimizer on `count(arr, pred) > N` and kin: the loop stops at this many matches. */
  threshold?: number;
  /** Set by the optimizer on `sum([a, b, …])`: computed as `a + (b + …)`. */
  addsElements?: boolean;
}
export interface PredicateNode extends Base {
  kind: "Predicate";
  node: Node;
  /** Set by the checker: the builtin this predicate belongs to. */
  owner?: string;
}
export interface ConditionalNode extends Base {
  kind: "Conditional";
  cond: Node;
  exp1: Node;
  exp2: Node;
}
export interface ArrayNode extends Base {
  kind: "Array";
  nodes: Node[];
}
export interface MapNode extends Base {
  kind: "Map";
  pairs: PairNode[];
}
export interface PairNode extends Base {
  kind: "Pair";
  key: Node;
  value: Node;
}
export interface LetNode extends Base {
  kind: "Let";
  name: string;
  value: Node;
  body: Node;
}
export interface SequenceNode extends Base {
  kind: "Sequence";
  nodes: Node[];
}

export type Node =
  | NilNode
  | BoolNode
  | IntNode
  | FloatNode
  | StringNode
  | BytesNode
  | ConstantNode
  | IdentifierNode
  | PointerNode
  | UnaryNode
  | BinaryNode
  | MemberNode
  | SliceNode
  | ChainNode
  | CallNode
  | BuiltinNode
  | PredicateNode
  | ConditionalNode
  | ArrayNode
  | MapNode
  | PairNode
  | LetNode
  | SequenceNode;

/** Calls `fn` on each direct child of a node. */
export function forEachChild(n: Node, fn: (child: Node) => void): void {
  switch (n.kind) {
    case "Unary":
    case "Chain":
    case "Predicate":
      fn(n.node);
      return;
    case "Binary":
      fn(n.left);
      fn(n.right);
      return;
    case "Member":
      fn(n.node);
      fn(n.property);
      return;
    case "Slice":
      fn(n.node);
      if (n.from) fn(n.from);
      if (n.to) fn(n.to);
      return;
    case "Call":
      fn(n.callee);
      n.args.forEach(fn);
      return;
    case "Builtin":
      n.args.forEach(fn);
      return;
    case "Conditional":
      fn(n.cond);
      fn(n.exp1);
      fn(n.exp2);
      return;
    case "Array":
    case "Sequence":
      n.nodes.forEach(fn);
      return;
    case "Map":
      n.pairs.forEach(fn);
      return;
    case "Pair":
      fn(n.key);
      fn(n.value);
      return;
    case "Let":
      fn(n.value);
      fn(n.body);
      return;
    default:
      return;
  }
}
