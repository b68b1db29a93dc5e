/**
 * Linear-time matching of RE2 patterns: the pattern compiles to a Thompson NFA that is run as a
 * lazily built DFA (states are sets of NFA instructions, cached per input character). Every input
 * character costs at most one DFA transition, so a hostile pattern cannot make matching
 * super-linear, unlike JavaScript's backtracking RegExp.
 */
import { type AssertKind, type CharTest, parseRegex, type RegexNode, RegexSyntaxError } from "./parser.js";

enum Op {
  Match = 0,
  Char = 1,
  Split = 2,
  Assert = 3,
}

/** Programs larger than this are rejected, as RE2 rejects "expression too large". */
const MAX_INSTRUCTIONS = 50000;
/** DFA cache size; when exceeded the cache is flushed (matching stays linear). */
const MAX_STATES = 4000;

const CTX_BEGIN = 1; // at the beginning of the text
const CTX_NEWLINE = 2; // previous character was \n
const CTX_WORD = 4; // previous character was a word character

const isWordCp = (c: number): boolean =>
  (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;

class Program {
  op: Op[] = [];
  out: number[] = [];
  out1: number[] = [];
  test: (CharTest | undefined)[] = [];
  kind: (AssertKind | undefined)[] = [];

  emit(op: Op, out: number, out1 = -1, test?: CharTest, kind?: AssertKind): number {
    if (this.op.length >= MAX_INSTRUCTIONS)
      throw new RegexSyntaxError("error parsing regexp: expression too large");
    this.op.push(op);
    this.out.push(out);
    this.out1.push(out1);
    this.test.push(test);
    this.kind.push(kind);
    return this.op.length - 1;
  }

  /** Compiles `node` so that it continues at `next`; returns the entry instruction. */
  compile(node: RegexNode, next: number): number {
    switch (node.t) {
      case "empty":
        return next;
      case "char":
        return this.emit(Op.Char, next, -1, node.test);
      case "assert":
        return this.emit(Op.Assert, next, -1, undefined, node.kind);
      case "cat": {
        let pc = next;
        for (let i = node.items.length - 1; i >= 0; i--) pc = this.compile(node.items[i] as RegexNode, pc);
        return pc;
      }
      case "alt": {
        let pc = this.compile(node.items[node.items.length - 1] as RegexNode, next);
        for (let i = node.items.length - 2; i >= 0; i--) {
          const a = this.compile(node.items[i] as RegexNode, next);
          pc = this.emit(Op.Split, a, pc);
        }
        return pc;
      }
      case "rep": {
        let pc = next;
        if (node.max === -1) {
          // x* loop, then `min` mandatory copies before it.
          const loop = this.emit(Op.Split, -1, next);
          const body = this.compile(node.node, loop);
          this.out[loop] = body;
          pc = loop;
        } else {
          for (let i = node.min; i < node.max; i++) {
            const body = this.compile(node.node, pc);
            pc = this.emit(Op.Split, body, next === pc ? next : pc);
            // Optional copies nest: each may stop and continue at `next`.
            this.out1[pc] = next;
          }
        }
        for (let i = 0; i < node.min; i++) pc = this.compile(node.node, pc);
        return pc;
      }
    }
  }
}

interface DState {
  /** NFA instructions reached after consuming the previous character (before epsilon closure). */
  pcs: Int32Array;
  ctx: number;
  ascii: (DState | null | undefined)[];
  other: Map<number, DState | null>;
  /** Cached result of "does the closure reach Match at end of input". */
  atEnd: boolean | undefined;
}

/** Sentinel transition result: a match was found. */
const MATCHED = null;

export class CompiledRegex {
  private readonly prog = new Program();
  private readonly start: number;
  private readonly anchored: boolean;
  private states = new Map<string, DState>();
  private readonly mark: Int32Array;
  private gen = 0;
  private readonly stack: number[] = [];

  constructor(readonly source: string) {
    const ast = parseRegex(source);
    const match = this.prog.emit(Op.Match, -1);
    this.start = this.prog.compile(ast, match);
    this.anchored = startsAnchored(ast);
    this.mark = new Int32Array(this.prog.op.length);
  }

  private state(pcs: Int32Array, ctx: number): DState {
    const key = `${ctx}|${pcs.join(",")}`;
    let s = this.states.get(key);
    if (!s) {
      if (this.states.size >= MAX_STATES) {
        // Drop the whole cache (reachable only from the current run afterwards): memory stays bounded.
        this.states = new Map();
        this.start0 = undefined;
      }
      s = { pcs, ctx, ascii: [], other: new Map(), atEnd: undefined };
      this.states.set(key, s);
    }
    return s;
  }

  private assertHolds(kind: AssertKind, ctx: number, next: number): boolean {
    switch (kind) {
      case "beginText":
        return (ctx & CTX_BEGIN) !== 0;
      case "beginLine":
        return (ctx & (CTX_BEGIN | CTX_NEWLINE)) !== 0;
      case "endText":
        return next === -1;
      case "endLine":
        return next === -1 || next === 10;
      case "wordBoundary":
        return ((ctx & CTX_WORD) !== 0) !== (next !== -1 && isWordCp(next));
      case "noWordBoundary":
        return ((ctx & CTX_WORD) !== 0) === (next !== -1 && isWordCp(next));
    }
  }

  /**
   * Follows epsilon edges from the state's instructions given the next character (-1 at the
   * end). Returns null when Match is reachable, otherwise the Char instructions that accept
   * `next`, as their successor instructions.
   */
  private step(s: DState, next: number, withStart: boolean): number[] | null {
    const prog = this.prog;
    const mark = this.mark;
    const gen = ++this.gen;
    const stack = this.stack;
    stack.length = 0;
    for (let i = s.pcs.length - 1; i >= 0; i--) stack.push(s.pcs[i] as number);
    if (withStart) stack.push(this.start);
    const out: number[] = [];
    while (stack.length > 0) {
      const pc = stack.pop() as number;
      if (mark[pc] === gen) continue;
      mark[pc] = gen;
      switch (prog.op[pc]) {
        case Op.Match:
          return null;
        case Op.Char:
          if (next !== -1 && (prog.test[pc] as CharTest)(next)) out.push(prog.out[pc] as number);
          break;
        case Op.Split:
          stack.push(prog.out1[pc] as number);
          stack.push(prog.out[pc] as number);
          break;
        case Op.Assert:
          if (this.assertHolds(prog.kind[pc] as AssertKind, s.ctx, next)) stack.push(prog.out[pc] as number);
          break;
      }
    }
    return out;
  }

  private transition(s: DState, c: number, withStart: boolean): DState | null {
    const succ = this.step(s, c, withStart);
    if (succ === null) return MATCHED;
    const uniq = Int32Array.from(new Set(succ)).sort();
    const ctx = (c === 10 ? CTX_NEWLINE : 0) | (isWordCp(c) ? CTX_WORD : 0);
    return this.state(uniq, ctx);
  }

  /** The state before the first character: its transitions always include the start. */
  private startState(): DState {
    if (!this.start0) this.start0 = this.state(new Int32Array(0), CTX_BEGIN);
    return this.start0;
  }

  private start0: DState | undefined;

  private next(s: DState, c: number, isStart: boolean): DState | null {
    const withStart = isStart || !this.anchored;
    let t: DState | null | undefined;
    if (c < 128) {
      t = s.ascii[c];
      if (t === undefined) {
        t = this.transition(s, c, withStart);
        s.ascii[c] = t;
      }
    } else {
      t = s.other.get(c);
      if (t === undefined) {
        t = this.transition(s, c, withStart);
        if (s.other.size < 256) s.other.set(c, t);
      }
    }
    return t;
  }

  private atEnd(s: DState, isStart: boolean): boolean {
    if (s.atEnd === undefined) s.atEnd = this.step(s, -1, isStart || !this.anchored) === null;
    return s.atEnd;
  }

  /** Searches a string (unanchored unless the pattern anchors itself). */
  test(str: string): boolean {
    let s: DState = this.startState();
    const n = str.length;
    const deadWhenEmpty = this.anchored;
    for (let i = 0; i < n; ) {
      let c = str.charCodeAt(i);
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
        c = str.codePointAt(i) as number;
        i += c > 0xffff ? 2 : 1;
      } else {
        i++;
      }
      const t = this.next(s, c, (s.ctx & CTX_BEGIN) !== 0);
      if (t === MATCHED) return true;
      s = t;
      // Anchored pattern with no live thread: no match is possible any more.
      if (deadWhenEmpty && s.pcs.length === 0) return false;
    }
    return this.atEnd(s, (s.ctx & CTX_BEGIN) !== 0);
  }

  /** Searches bytes, decoded as UTF-8 (an invalid byte reads as U+FFFD, as in Go). */
  testBytes(b: Uint8Array): boolean {
    return this.test(new TextDecoder().decode(b));
  }
}

function startsAnchored(n: RegexNode): boolean {
  if (n.t === "assert") return n.kind === "beginText";
  if (n.t === "cat") return n.items.length > 0 && startsAnchored(n.items[0] as RegexNode);
  if (n.t === "alt") return n.items.every(startsAnchored);
  return false;
}

const cache = new Map<string, CompiledRegex>();

/** Compiles (with a small cache, for dynamic patterns); throws RegexSyntaxError. */
export function compileRegex(source: string): CompiledRegex {
  let r = cache.get(source);
  if (!r) {
    r = new CompiledRegex(source);
    if (cache.size >= 256) cache.clear();
    cache.set(source, r);
  }
  return r;
}
