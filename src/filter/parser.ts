/**
 * Recursive-descent / precedence-climbing parser, following upstream's parser.go so that
 * precedence, chained comparisons, `??` mixing, predicates, pipes and node counting match.
 */
import type {
  ArrayNode,
  BinaryNode,
  ChainNode,
  LetNode,
  MapNode,
  MemberNode,
  Node,
  PairNode,
  PredicateNode,
  SequenceNode,
} from "./ast.js";
import { BUILTIN_NAMES, PREDICATE_BUILTINS } from "./builtins/names.js";
import { CompileFailure, LimitFailure } from "./errors.js";
import { isValidIdentifier, type Token, tokenize } from "./lexer.js";

interface OpInfo {
  prec: number;
  right: boolean;
}

const BINARY: ReadonlyMap<string, OpInfo> = new Map([
  ["|", { prec: 0, right: false }],
  ["or", { prec: 10, right: false }],
  ["||", { prec: 10, right: false }],
  ["and", { prec: 15, right: false }],
  ["&&", { prec: 15, right: false }],
  ["==", { prec: 20, right: false }],
  ["!=", { prec: 20, right: false }],
  ["<", { prec: 20, right: false }],
  [">", { prec: 20, right: false }],
  [">=", { prec: 20, right: false }],
  ["<=", { prec: 20, right: false }],
  ["in", { prec: 20, right: false }],
  ["matches", { prec: 20, right: false }],
  ["contains", { prec: 20, right: false }],
  ["startsWith", { prec: 20, right: false }],
  ["endsWith", { prec: 20, right: false }],
  ["..", { prec: 25, right: false }],
  ["+", { prec: 30, right: false }],
  ["-", { prec: 30, right: false }],
  ["*", { prec: 60, right: false }],
  ["/", { prec: 60, right: false }],
  ["%", { prec: 60, right: false }],
  ["**", { prec: 100, right: true }],
  ["^", { prec: 100, right: true }],
  ["??", { prec: 500, right: false }],
]);

const UNARY: ReadonlyMap<string, number> = new Map([
  ["not", 50],
  ["!", 50],
  ["-", 90],
  ["+", 90],
]);

const NEGATABLE = new Set(["in", "matches", "contains", "startsWith", "endsWith"]);
const COMPARISON = new Set(["<", ">", ">=", "<="]);

export interface ParseOptions {
  /** AST node cap; 0 disables it. */
  maxNodes: number;
  /** Nesting limit (parser recursion and AST depth); 0 disables it. */
  maxDepth: number;
  disableIfOperator: boolean;
  disabledBuiltins: ReadonlySet<string>;
  /** True when an env variable or function of that name shadows a builtin. */
  isOverridden: (name: string) => boolean;
}

/** The compile error for an expression nested deeper than the limit. */
export function nestingMessage(limit: number): string {
  return `expression is nested too deeply (the limit is ${limit} levels)`;
}

function describe(t: Token): string {
  if (t.kind === "EOF") return "EOF";
  return `${t.kind}(${JSON.stringify(t.value)})`;
}

class Parser {
  private i = 0;
  private cur: Token;
  private nodeCount = 0;
  /** Depth of predicate nesting: `#` and `.x` are only valid inside. */
  private depth = 0;
  /** Current depth of parser recursion, bounded by `maxDepth`. */
  private nesting = 0;

  constructor(
    private readonly tokens: Token[],
    private readonly opts: ParseOptions,
  ) {
    this.cur = tokens[0] as Token;
  }

  private error(msg: string, tok: Token = this.cur): never {
    if (tok.kind === "EOF" && msg.startsWith("unexpected token")) {
      throw new CompileFailure("unexpected end of expression", tok.pos);
    }
    throw new CompileFailure(msg, tok.pos);
  }

  private next(): void {
    this.i++;
    if (this.i >= this.tokens.length) {
      this.error("unexpected end of expression", this.tokens[this.tokens.length - 1]);
    }
    this.cur = this.tokens[this.i] as Token;
  }

  private is(kind: Token["kind"], value?: string): boolean {
    return this.cur.kind === kind && (value === undefined || this.cur.value === value);
  }

  private expect(kind: Token["kind"], value?: string): void {
    if (this.is(kind, value)) {
      this.next();
      return;
    }
    this.error(`unexpected token ${describe(this.cur)}`);
  }

  /** Counts a node against the cap, as upstream's createNode does. */
  private node<T extends Node>(n: T): T {
    this.nodeCount++;
    if (this.opts.maxNodes > 0 && this.nodeCount > this.opts.maxNodes) {
      throw new CompileFailure("compilation failed: expression exceeds maximum allowed nodes", n.pos);
    }
    return n;
  }

  parseProgram(): Node {
    const n = this.parseSequence();
    if (!this.is("EOF")) this.error(`unexpected token ${describe(this.cur)}`);
    return n;
  }

  private parseSequence(): Node {
    const nodes = [this.parseExpression(0)];
    while (this.is("Operator", ";")) {
      this.next();
      if (this.is("EOF")) break;
      nodes.push(this.parseExpression(0));
    }
    if (nodes.length === 1) return nodes[0] as Node;
    return this.node<SequenceNode>({ kind: "Sequence", nodes, pos: (nodes[0] as Node).pos });
  }

  /** Counts one level of parser recursion against the nesting limit (undone by {@link leave}). */
  private enter(): void {
    if (++this.nesting > this.opts.maxDepth && this.opts.maxDepth > 0) {
      throw new LimitFailure(nestingMessage(this.opts.maxDepth), this.cur.pos);
    }
  }

  private leave(): void {
    this.nesting--;
  }

  private parseExpression(precedence: number): Node {
    this.enter();
    try {
      return this.parseExpressionAt(precedence);
    } finally {
      this.leave();
    }
  }

  private parseExpressionAt(precedence: number): Node {
    if (precedence === 0 && this.is("Operator", "let")) return this.parseLet();
    if (precedence === 0 && !this.opts.disableIfOperator && this.is("Operator", "if")) return this.parseIf();

    let left = this.parsePrimary();
    let prevOperator = "";
    let opToken = this.cur;
    while (opToken.kind === "Operator") {
      const negate = opToken.value === "not";
      let notToken: Token | undefined;
      if (negate) {
        const savedI = this.i;
        this.next();
        if (NEGATABLE.has(this.cur.value) && this.cur.kind === "Operator") {
          const op = BINARY.get(this.cur.value) as OpInfo;
          if (op.prec >= precedence) {
            notToken = opToken;
            opToken = this.cur;
          } else {
            this.i = savedI;
            this.cur = opToken;
            break;
          }
        } else {
          this.error(`unexpected token ${describe(this.cur)}`);
        }
      }
      const op = BINARY.get(opToken.value);
      if (!op || op.prec < precedence) break;
      this.next();

      if (opToken.value === "|") {
        const ident = this.cur;
        this.expect("Identifier");
        left = this.parseCall(ident, [left], true);
      } else {
        if (prevOperator === "??" && opToken.value !== "??") {
          this.error(
            `Operator (${opToken.value}) and coalesce expressions (??) cannot be mixed. Wrap either by parentheses.`,
            opToken,
          );
        }
        if (COMPARISON.has(opToken.value)) {
          left = this.parseComparison(left, opToken, op.prec);
        } else {
          const right = this.parseExpression(op.right ? op.prec : op.prec + 1);
          left = this.node<BinaryNode>({ kind: "Binary", op: opToken.value, left, right, pos: opToken.pos });
          if (negate) {
            left = this.node({ kind: "Unary", op: "not", node: left, pos: (notToken as Token).pos });
          }
        }
      }
      prevOperator = opToken.value;
      opToken = this.cur;
    }
    if (precedence === 0) left = this.parseConditional(left);
    return left;
  }

  private parseComparison(leftIn: Node, tokenIn: Token, precedence: number): Node {
    let left = leftIn;
    let token = tokenIn;
    let root: Node | undefined;
    for (;;) {
      const comparator = this.parseExpression(precedence + 1);
      const cmp = this.node<BinaryNode>({
        kind: "Binary",
        op: token.value,
        left,
        right: comparator,
        pos: token.pos,
      });
      root = root
        ? this.node<BinaryNode>({ kind: "Binary", op: "&&", left: root, right: cmp, pos: token.pos })
        : cmp;
      left = comparator;
      token = this.cur;
      if (!(token.kind === "Operator" && COMPARISON.has(token.value))) break;
      this.next();
    }
    return root;
  }

  private parseConditional(nodeIn: Node): Node {
    let node = nodeIn;
    while (this.is("Operator", "?")) {
      this.next();
      let exp1: Node;
      let exp2: Node;
      if (!this.is("Operator", ":")) {
        exp1 = this.parseExpression(0);
        this.expect("Operator", ":");
        exp2 = this.parseExpression(0);
      } else {
        this.next();
        exp1 = node;
        exp2 = this.parseExpression(0);
      }
      node = this.node({ kind: "Conditional", cond: node, exp1, exp2, pos: node.pos });
    }
    return node;
  }

  private parseLet(): Node {
    this.expect("Operator", "let");
    const name = this.cur;
    this.expect("Identifier");
    this.expect("Operator", "=");
    const value = this.parseExpression(0);
    this.expect("Operator", ";");
    const body = this.parseSequence();
    return this.node<LetNode>({ kind: "Let", name: name.value, value, body, pos: name.pos });
  }

  private parseIf(): Node {
    this.enter();
    try {
      return this.parseIfAt();
    } finally {
      this.leave();
    }
  }

  private parseIfAt(): Node {
    const start = this.cur;
    this.next();
    const cond = this.parseExpression(0);
    this.expect("Bracket", "{");
    const exp1 = this.parseSequence();
    this.expect("Bracket", "}");
    this.expect("Operator", "else");
    let exp2: Node;
    if (this.is("Operator", "if")) {
      exp2 = this.parseIf();
    } else {
      this.expect("Bracket", "{");
      exp2 = this.parseSequence();
      this.expect("Bracket", "}");
    }
    // Not counted: an upstream quirk.
    return { kind: "Conditional", cond, exp1, exp2, pos: start.pos };
  }

  private parsePrimary(): Node {
    const token = this.cur;
    if (token.kind === "Operator") {
      const prec = UNARY.get(token.value);
      if (prec !== undefined) {
        this.next();
        const expr = this.parseExpression(prec);
        const n = this.node({ kind: "Unary", op: token.value, node: expr, pos: token.pos });
        return this.parsePostfix(n);
      }
    }
    if (this.is("Bracket", "(")) {
      this.next();
      const expr = this.parseSequence();
      this.expect("Bracket", ")");
      return this.parsePostfix(expr);
    }
    if (this.depth > 0 && token.kind === "Operator" && (token.value === "#" || token.value === ".")) {
      let name = "";
      if (token.value === "#") {
        this.next();
        if (this.is("Identifier")) {
          name = this.cur.value;
          this.next();
        }
      }
      const n = this.node({ kind: "Pointer", name, pos: token.pos });
      return this.parsePostfix(n);
    }
    if (this.is("Operator", "::")) {
      this.next();
      const ident = this.cur;
      this.expect("Identifier");
      return this.parsePostfix(this.parseCall(ident, [], false));
    }
    return this.parseSecondary();
  }

  private parseSecondary(): Node {
    const token = this.cur;
    let node: Node;
    switch (token.kind) {
      case "Identifier":
        this.next();
        switch (token.value) {
          case "true":
            return this.node({ kind: "Bool", value: true, pos: token.pos });
          case "false":
            return this.node({ kind: "Bool", value: false, pos: token.pos });
          case "nil":
            return this.node({ kind: "Nil", pos: token.pos });
        }
        if (this.is("Bracket", "(")) node = this.parseCall(token, [], true);
        else node = this.node({ kind: "Identifier", name: token.value, pos: token.pos });
        break;
      case "Number":
        this.next();
        return this.parseNumber(token);
      case "String":
        this.next();
        node = this.node({ kind: "String", value: token.value, pos: token.pos });
        break;
      case "Bytes":
        this.next();
        node = this.node({ kind: "Bytes", value: token.bytes as Uint8Array, pos: token.pos });
        break;
      default:
        if (this.is("Bracket", "[")) node = this.parseArray(token);
        else if (this.is("Bracket", "{")) node = this.parseMap(token);
        else this.error(`unexpected token ${describe(token)}`);
    }
    return this.parsePostfix(node);
  }

  private parseNumber(token: Token): Node {
    const value = token.value.replaceAll("_", "");
    const lower = value.toLowerCase();
    const intNode = (text: string, radix: number, what: string): Node => {
      const ok =
        radix === 16 ? /^[0-9a-f]+$/i : radix === 8 ? /^[0-7]+$/ : radix === 2 ? /^[01]+$/ : /^[0-9]+$/;
      if (!ok.test(text))
        this.error(
          `invalid ${what} literal: strconv.ParseInt: parsing ${JSON.stringify(text)}: invalid syntax`,
          token,
        );
      const prefix = radix === 16 ? "0x" : radix === 8 ? "0o" : radix === 2 ? "0b" : "";
      const big = BigInt(prefix + text);
      if (big > 9223372036854775807n) {
        this.error(
          `invalid ${what} literal: strconv.ParseInt: parsing ${JSON.stringify(text)}: value out of range`,
          token,
        );
      }
      const v = big <= 9007199254740991n ? Number(big) : big;
      return this.node({ kind: "Int", value: v, pos: token.pos });
    };
    if (lower.startsWith("0x")) return intNode(value.slice(2), 16, "hex");
    if (lower.includes(".") || lower.includes("e")) {
      const f = parseGoFloat(value);
      if (f === undefined) {
        this.error(
          `invalid float literal: strconv.ParseFloat: parsing ${JSON.stringify(value)}: invalid syntax`,
          token,
        );
      }
      if (!Number.isFinite(f)) {
        this.error(
          `invalid float literal: strconv.ParseFloat: parsing ${JSON.stringify(value)}: value out of range`,
          token,
        );
      }
      return this.node({ kind: "Float", value: f, pos: token.pos });
    }
    if (lower.startsWith("0b")) return intNode(value.slice(2), 2, "binary");
    if (lower.startsWith("0o")) return intNode(value.slice(2), 8, "octal");
    return intNode(value, 10, "integer");
  }

  private parseCall(token: Token, argsIn: Node[], checkOverrides: boolean): Node {
    const name = token.value;
    const overridden = checkOverrides && this.opts.isOverridden(name);
    const pred = PREDICATE_BUILTINS.get(name);
    if (pred && !overridden && !this.opts.disabledBuiltins.has(name)) {
      this.expect("Bracket", "(");
      const args = [...argsIn];
      const rest = pred.slice(argsIn.length);
      for (let k = 0; k < rest.length; k++) {
        const spec = rest[k] as string;
        if (spec.endsWith("?")) {
          if (this.is("Bracket", ")")) break;
        } else if (this.is("Bracket", ")")) {
          this.error(`expected at least ${rest.length} arguments`);
        }
        if (k > 0) this.expect("Operator", ",");
        args.push(spec.startsWith("p") ? this.parsePredicate() : this.parseExpression(0));
      }
      if (this.is("Operator", ",")) this.next();
      this.expect("Bracket", ")");
      return this.node({ kind: "Builtin", name, args, pos: token.pos });
    }
    if (BUILTIN_NAMES.has(name) && !this.opts.disabledBuiltins.has(name) && !overridden) {
      return this.node({ kind: "Builtin", name, args: this.parseArguments(argsIn), pos: token.pos });
    }
    const callee = this.node({ kind: "Identifier" as const, name, pos: token.pos });
    return this.node({ kind: "Call", callee, args: this.parseArguments(argsIn), pos: token.pos });
  }

  private parseArguments(argsIn: Node[]): Node[] {
    const args = [...argsIn];
    const offset = args.length;
    this.expect("Bracket", "(");
    while (!this.is("Bracket", ")")) {
      if (args.length > offset) this.expect("Operator", ",");
      if (this.is("Bracket", ")")) break;
      args.push(this.parseExpression(0));
    }
    this.expect("Bracket", ")");
    return args;
  }

  private parsePredicate(): Node {
    const start = this.cur;
    const withBrackets = this.is("Bracket", "{");
    if (withBrackets) this.next();
    this.depth++;
    let node: Node;
    if (withBrackets) {
      node = this.parseSequence();
    } else {
      node = this.parseExpression(0);
      if (this.is("Operator", ";")) this.error("wrap predicate with brackets { and }");
    }
    this.depth--;
    if (withBrackets) this.expect("Bracket", "}");
    return this.node<PredicateNode>({ kind: "Predicate", node, pos: start.pos });
  }

  private parseArray(token: Token): Node {
    const nodes: Node[] = [];
    this.expect("Bracket", "[");
    while (!this.is("Bracket", "]")) {
      if (nodes.length > 0) {
        this.expect("Operator", ",");
        if (this.is("Bracket", "]")) break;
      }
      nodes.push(this.parseExpression(0));
    }
    this.expect("Bracket", "]");
    return this.node<ArrayNode>({ kind: "Array", nodes, pos: token.pos });
  }

  private parseMap(token: Token): Node {
    this.expect("Bracket", "{");
    const pairs: PairNode[] = [];
    while (!this.is("Bracket", "}")) {
      if (pairs.length > 0) {
        this.expect("Operator", ",");
        if (this.is("Bracket", "}")) break;
        if (this.is("Operator", ",")) this.error(`unexpected token ${describe(this.cur)}`);
      }
      let key: Node;
      if (this.is("Number") || this.is("String") || this.is("Identifier")) {
        key = this.node({ kind: "String", value: this.cur.value, pos: this.cur.pos });
        this.next();
      } else if (this.is("Bracket", "(")) {
        key = this.parseExpression(0);
      } else {
        this.error(
          `a map key must be a quoted string, a number, a identifier, or an expression enclosed in parentheses (unexpected token ${describe(this.cur)})`,
        );
      }
      this.expect("Operator", ":");
      const value = this.parseExpression(0);
      pairs.push(this.node<PairNode>({ kind: "Pair", key, value, pos: token.pos }));
    }
    this.expect("Bracket", "}");
    return this.node<MapNode>({ kind: "Map", pairs, pos: token.pos });
  }

  private parsePostfix(nodeIn: Node): Node {
    let node = nodeIn;
    let postfix = this.cur;
    while (postfix.kind === "Operator" || postfix.kind === "Bracket") {
      const optional = postfix.value === "?.";
      if (postfix.value === "." || postfix.value === "?.") {
        this.next();
        let prop = this.cur;
        if (optional && this.is("Bracket", "[")) {
          // `?.[expr]`: optional index.
          node = this.parseIndex(node, prop, true);
          postfix = this.cur;
          continue;
        }
        this.next();
        if (prop.kind !== "Identifier" && (prop.kind !== "Operator" || !isValidIdentifier(prop.value))) {
          this.error("expected name", prop);
        }
        prop = { ...prop };
        const property = this.node({ kind: "String" as const, value: prop.value, pos: prop.pos });
        const isChain = node.kind === "Chain";
        const base = isChain ? (node as ChainNode).node : node;
        const member = this.node<MemberNode>({
          kind: "Member",
          node: base,
          property,
          optional,
          method: false,
          pos: prop.pos,
        });
        if (this.is("Bracket", "(")) {
          member.method = true;
          node = this.node({ kind: "Call", callee: member, args: this.parseArguments([]), pos: prop.pos });
        } else {
          node = member;
        }
        if (isChain || optional) node = this.node<ChainNode>({ kind: "Chain", node, pos: prop.pos });
      } else if (postfix.value === "[") {
        node = this.parseIndex(node, postfix, false);
      } else {
        break;
      }
      postfix = this.cur;
    }
    return node;
  }

  /** Parses `[i]`, `[a:b]` and their variants; the current token is `[`. */
  private parseIndex(node: Node, bracket: Token, optional: boolean): Node {
    this.next();
    if (this.is("Operator", ":")) {
      this.next();
      let to: Node | undefined;
      if (!this.is("Bracket", "]")) to = this.parseExpression(0);
      const n = this.node({ kind: "Slice" as const, node, to, pos: bracket.pos });
      this.expect("Bracket", "]");
      return n;
    }
    const from = this.parseExpression(0);
    if (this.is("Operator", ":")) {
      this.next();
      let to: Node | undefined;
      if (!this.is("Bracket", "]")) to = this.parseExpression(0);
      const n = this.node({ kind: "Slice" as const, node, from, to, pos: bracket.pos });
      this.expect("Bracket", "]");
      return n;
    }
    let result: Node = this.node<MemberNode>({
      kind: "Member",
      node,
      property: from,
      optional,
      method: false,
      pos: bracket.pos,
    });
    if (optional) result = this.node<ChainNode>({ kind: "Chain", node: result, pos: bracket.pos });
    this.expect("Bracket", "]");
    return result;
  }
}

/** Go strconv.ParseFloat syntax for decimal literals (after `_` removal). */
function parseGoFloat(s: string): number | undefined {
  if (!/^(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/.test(s)) return undefined;
  return Number(s);
}

/** Parses a source text into an AST; throws CompileFailure. */
export function parse(src: string, opts: ParseOptions): Node {
  const tokens = tokenize(src, { disableIfOperator: opts.disableIfOperator });
  return new Parser(tokens, opts).parseProgram();
}
