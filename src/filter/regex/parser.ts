/**
 * Parser for Go's RE2 regular-expression syntax. The result is matched by our own automaton
 * (matcher.ts), never by JavaScript's backtracking RegExp engine, so matching is linear in the
 * input and the dialect is RE2's (`(?i)` flags, `\pL`, `[[:alpha:]]`, no backreferences).
 */

/** A set of code points, with case folding and negation already applied. */
export type CharTest = (cp: number) => boolean;

export type AssertKind =
  | "beginText"
  | "endText"
  | "beginLine"
  | "endLine"
  | "wordBoundary"
  | "noWordBoundary";

export type RegexNode =
  | { t: "char"; test: CharTest }
  | { t: "cat"; items: RegexNode[] }
  | { t: "alt"; items: RegexNode[] }
  | { t: "rep"; node: RegexNode; min: number; max: number }
  | { t: "assert"; kind: AssertKind }
  | { t: "empty" };

/** Parse error; the message follows Go's regexp/syntax wording. */
export class RegexSyntaxError extends Error {}

interface Flags {
  i: boolean;
  m: boolean;
  s: boolean;
  U: boolean;
}

const MAX_REPEAT = 1000;

const GENERAL_CATEGORIES = new Set(
  "L Lu Ll Lt Lm Lo M Mn Mc Me N Nd Nl No P Pc Pd Ps Pe Pi Pf Po S Sm Sc Sk So Z Zs Zl Zp C Cc Cf Co Cs".split(
    " ",
  ),
);

type Range = [number, number];

const POSIX: Record<string, Range[]> = {
  alnum: [
    [48, 57],
    [65, 90],
    [97, 122],
  ],
  alpha: [
    [65, 90],
    [97, 122],
  ],
  ascii: [[0, 127]],
  blank: [
    [9, 9],
    [32, 32],
  ],
  cntrl: [
    [0, 31],
    [127, 127],
  ],
  digit: [[48, 57]],
  graph: [[33, 126]],
  lower: [[97, 122]],
  print: [[32, 126]],
  punct: [
    [33, 47],
    [58, 64],
    [91, 96],
    [123, 126],
  ],
  space: [
    [9, 13],
    [32, 32],
  ],
  upper: [[65, 90]],
  word: [
    [48, 57],
    [65, 90],
    [95, 95],
    [97, 122],
  ],
  xdigit: [
    [48, 57],
    [65, 70],
    [97, 102],
  ],
};

const PERL: Record<string, Range[]> = {
  d: POSIX.digit as Range[],
  s: [
    [9, 10],
    [12, 13],
    [32, 32],
  ],
  w: POSIX.word as Range[],
};

/** Simple (one-to-one) case variants of a code point. */
export function caseVariants(cp: number): number[] {
  const ch = String.fromCodePoint(cp);
  const out = [cp];
  for (const m of [ch.toLowerCase(), ch.toUpperCase()]) {
    const cps = [...m];
    if (cps.length === 1) {
      const v = cps[0]?.codePointAt(0) as number;
      if (!out.includes(v)) out.push(v);
    }
  }
  return out;
}

function unicodeClass(name: string): CharTest | undefined {
  if (name === "Any") return () => true;
  let re: RegExp;
  try {
    re = GENERAL_CATEGORIES.has(name)
      ? new RegExp(`^\\p{${name}}$`, "u")
      : new RegExp(`^\\p{Script=${name}}$`, "u");
  } catch {
    return undefined;
  }
  const cache = new Map<number, boolean>();
  return (cp) => {
    let r = cache.get(cp);
    if (r === undefined) {
      r = re.test(String.fromCodePoint(cp));
      if (cache.size < 4096) cache.set(cp, r);
    }
    return r;
  };
}

class ClassBuilder {
  readonly ranges: Range[] = [];
  readonly tests: CharTest[] = [];

  addRange(lo: number, hi: number): void {
    this.ranges.push([lo, hi]);
  }
  addRanges(rs: Range[], negate: boolean): void {
    if (!negate) {
      for (const r of rs) this.ranges.push(r);
      return;
    }
    this.tests.push((cp) => !rs.some(([lo, hi]) => cp >= lo && cp <= hi));
  }
  addTest(t: CharTest, negate: boolean): void {
    this.tests.push(negate ? (cp) => !t(cp) : t);
  }

  build(negated: boolean, fold: boolean): CharTest {
    const ranges = this.ranges.slice().sort((a, b) => a[0] - b[0]);
    const tests = this.tests.slice();
    const base = (cp: number): boolean => {
      for (const [lo, hi] of ranges) {
        if (cp < lo) break;
        if (cp <= hi) return true;
      }
      for (const t of tests) if (t(cp)) return true;
      return false;
    };
    const folded = fold ? (cp: number) => caseVariants(cp).some(base) : base;
    return negated ? (cp) => !folded(cp) : folded;
  }
}

class RegexParser {
  private pos = 0;
  private readonly cps: number[];
  private flags: Flags = { i: false, m: false, s: false, U: false };

  constructor(private readonly src: string) {
    this.cps = [...src].map((c) => c.codePointAt(0) as number);
  }

  private err(kind: string, fragment: string): never {
    throw new RegexSyntaxError(`error parsing regexp: ${kind}: \`${fragment}\``);
  }

  private peek(off = 0): number {
    return this.cps[this.pos + off] ?? -1;
  }

  private rest(from: number): string {
    return String.fromCodePoint(...this.cps.slice(from));
  }

  parse(): RegexNode {
    const node = this.parseAlt(0);
    if (this.pos < this.cps.length) {
      // Only an unmatched ')' can stop the top level early.
      this.err("unexpected )", this.src);
    }
    return node;
  }

  private parseAlt(depth: number): RegexNode {
    const items = [this.parseConcat(depth)];
    while (this.peek() === 0x7c /* | */) {
      this.pos++;
      items.push(this.parseConcat(depth));
    }
    return items.length === 1 ? (items[0] as RegexNode) : { t: "alt", items };
  }

  private parseConcat(depth: number): RegexNode {
    const items: RegexNode[] = [];
    const saved = { ...this.flags };
    for (;;) {
      const c = this.peek();
      if (c === -1 || c === 0x7c) break;
      if (c === 0x29 /* ) */) {
        if (depth === 0) this.err("unexpected )", this.src);
        break;
      }
      const atomStart = this.pos;
      const atom = this.parseAtom(depth);
      if (atom === undefined) continue; // a flag group like (?i)
      items.push(this.parseRepeats(atom, atomStart));
    }
    // Flags set by (?i) last until the end of the enclosing group, not across `|`... but Go keeps
    // them for the rest of the group including later alternatives; restore only at group end.
    void saved;
    return items.length === 1 ? (items[0] as RegexNode) : { t: "cat", items };
  }

  private parseRepeats(atomIn: RegexNode, atomStart: number): RegexNode {
    let atom = atomIn;
    let lastRepeat = -1;
    for (;;) {
      const c = this.peek();
      let min: number;
      let max: number;
      const opStart = this.pos;
      if (c === 0x2a /* * */) {
        min = 0;
        max = -1;
        this.pos++;
      } else if (c === 0x2b /* + */) {
        min = 1;
        max = -1;
        this.pos++;
      } else if (c === 0x3f /* ? */) {
        min = 0;
        max = 1;
        this.pos++;
      } else if (c === 0x7b /* { */) {
        const r = this.tryRepeatBraces();
        if (!r) return atom;
        [min, max] = r;
      } else {
        return atom;
      }
      if (this.peek() === 0x3f) this.pos++; // lazy: irrelevant for a yes/no match
      if (lastRepeat >= 0)
        this.err("invalid nested repetition operator", this.rest(lastRepeat).slice(0, this.pos - lastRepeat));
      lastRepeat = opStart;
      if (max !== -1 && (min > MAX_REPEAT || max > MAX_REPEAT || max < min)) {
        this.err("invalid repeat count", this.rest(opStart).slice(0, this.pos - opStart));
      }
      if (min > MAX_REPEAT) this.err("invalid repeat count", this.rest(opStart).slice(0, this.pos - opStart));
      void atomStart;
      atom = { t: "rep", node: atom, min, max };
    }
  }

  /** `{n}`, `{n,}`, `{n,m}`; anything else is a literal `{`. */
  private tryRepeatBraces(): [number, number] | undefined {
    const start = this.pos;
    let i = this.pos + 1;
    const num = (): number | undefined => {
      const s = i;
      while ((this.cps[i] ?? -1) >= 48 && (this.cps[i] ?? -1) <= 57) i++;
      if (i === s) return undefined;
      return Number(String.fromCodePoint(...this.cps.slice(s, i)));
    };
    const min = num();
    if (min === undefined) return undefined;
    let max = min;
    if (this.cps[i] === 0x2c /* , */) {
      i++;
      if (this.cps[i] === 0x7d) max = -1;
      else {
        const m = num();
        if (m === undefined) return undefined;
        max = m;
      }
    }
    if (this.cps[i] !== 0x7d) return undefined;
    this.pos = i + 1;
    void start;
    return [min, max];
  }

  private charNode(cp: number): RegexNode {
    if (this.flags.i) {
      const vs = caseVariants(cp);
      if (vs.length > 1)
        return { t: "char", test: (c) => c === cp || caseVariants(c).some((v) => vs.includes(v)) };
    }
    return { t: "char", test: (c) => c === cp };
  }

  private parseAtom(depth: number): RegexNode | undefined {
    const start = this.pos;
    const c = this.peek();
    switch (c) {
      case 0x28: /* ( */ {
        this.pos++;
        if (this.peek() === 0x3f /* ? */) {
          const g = this.parseGroupFlags(start);
          if (g === "flags") return undefined;
          if (g === "noncapture") return this.finishGroup(depth, start, true);
          // named capture falls through to a normal group
        }
        return this.finishGroup(depth, start, false);
      }
      case 0x2a:
      case 0x2b:
      case 0x3f:
        this.err("missing argument to repetition operator", String.fromCodePoint(c));
        break;
      case 0x7b: {
        // A `{` that is not a valid repeat is a literal; a valid one here has nothing to repeat.
        const saved = this.pos;
        if (this.tryRepeatBraces()) {
          const frag = this.rest(saved).slice(0, this.pos - saved);
          this.err("missing argument to repetition operator", frag);
        }
        this.pos = saved + 1;
        return this.charNode(c);
      }
      case 0x5b /* [ */:
        return this.parseClass();
      case 0x2e /* . */:
        this.pos++;
        if (this.flags.s) return { t: "char", test: () => true };
        return { t: "char", test: (x) => x !== 10 };
      case 0x5e /* ^ */:
        this.pos++;
        return { t: "assert", kind: this.flags.m ? "beginLine" : "beginText" };
      case 0x24 /* $ */:
        this.pos++;
        return { t: "assert", kind: this.flags.m ? "endLine" : "endText" };
      case 0x5c /* \ */:
        return this.parseEscapeAtom();
      default:
        this.pos++;
        return this.charNode(c);
    }
  }

  /** After `(?`: flag groups return "flags"; `(?:` returns "noncapture"; named groups "named". */
  private parseGroupFlags(groupStart: number): "flags" | "noncapture" | "named" {
    this.pos++; // ?
    const c = this.peek();
    if (c === 0x50 /* P */ || c === 0x3c /* < */) {
      if (c === 0x50) this.pos++;
      if (this.peek() !== 0x3c)
        this.err("invalid or unsupported Perl syntax", this.rest(groupStart).slice(0, 3));
      this.pos++;
      const nameStart = this.pos;
      while (this.peek() !== 0x3e && this.peek() !== -1) this.pos++;
      if (this.peek() === -1) this.err("invalid named capture", this.rest(groupStart));
      const name = String.fromCodePoint(...this.cps.slice(nameStart, this.pos));
      if (!/^[A-Za-z0-9_]+$/.test(name))
        this.err("invalid named capture", this.rest(groupStart).slice(0, this.pos - groupStart + 1));
      this.pos++;
      return "named";
    }
    let neg = false;
    let sawFlag = false;
    const next = { ...this.flags };
    for (;;) {
      const f = this.peek();
      if (f === -1) this.err("missing closing )", this.rest(groupStart));
      this.pos++;
      switch (f) {
        case 0x69:
          next.i = !neg;
          sawFlag = true;
          break;
        case 0x6d:
          next.m = !neg;
          sawFlag = true;
          break;
        case 0x73:
          next.s = !neg;
          sawFlag = true;
          break;
        case 0x55:
          next.U = !neg;
          sawFlag = true;
          break;
        case 0x2d /* - */:
          if (neg)
            this.err(
              "invalid or unsupported Perl syntax",
              this.rest(groupStart).slice(0, this.pos - groupStart),
            );
          neg = true;
          sawFlag = false;
          break;
        case 0x3a /* : */:
        case 0x29 /* ) */:
          {
            if (neg && !sawFlag)
              this.err(
                "invalid or unsupported Perl syntax",
                this.rest(groupStart).slice(0, this.pos - groupStart),
              );
            if (f === 0x29) {
              if (!sawFlag && !neg) this.err("missing argument to repetition operator", "(?)");
              this.flags = next;
              return "flags";
            }
            // (?flags:...) applies only inside the group: finishGroup restores.
            this.groupFlags = next;
            return "noncapture";
          }
        default:
          this.err(
            "invalid or unsupported Perl syntax",
            this.rest(groupStart).slice(0, this.pos - groupStart),
          );
      }
    }
  }

  private groupFlags: Flags | undefined;

  private finishGroup(depth: number, start: number, _noncapture: boolean): RegexNode {
    const outer = { ...this.flags };
    if (this.groupFlags) {
      this.flags = this.groupFlags;
      this.groupFlags = undefined;
    }
    const inner = this.parseAlt(depth + 1);
    if (this.peek() !== 0x29) this.err("missing closing )", this.rest(start));
    this.pos++;
    this.flags = outer;
    return inner;
  }

  private parseEscapeAtom(): RegexNode {
    const start = this.pos;
    this.pos++;
    const c = this.peek();
    if (c === -1) this.err("trailing backslash at end of expression", "");
    switch (c) {
      case 0x41 /* A */:
        this.pos++;
        return { t: "assert", kind: "beginText" };
      case 0x7a /* z */:
        this.pos++;
        return { t: "assert", kind: "endText" };
      case 0x62 /* b */:
        this.pos++;
        return { t: "assert", kind: "wordBoundary" };
      case 0x42 /* B */:
        this.pos++;
        return { t: "assert", kind: "noWordBoundary" };
      case 0x51 /* Q */:
        {
          this.pos++;
          const items: RegexNode[] = [];
          while (this.pos < this.cps.length) {
            if (this.peek() === 0x5c && this.peek(1) === 0x45) {
              this.pos += 2;
              break;
            }
            items.push(this.charNode(this.peek()));
            this.pos++;
          }
          return items.length === 1 ? (items[0] as RegexNode) : { t: "cat", items };
        }
    }
    const cls = this.tryClassEscape();
    if (cls) return { t: "char", test: cls.build(false, this.flags.i) };
    this.pos = start;
    const cp = this.parseEscapeChar();
    return this.charNode(cp);
  }

  /** `\d \s \w \D \S \W \pX \p{...} \PX`, parsed into a class builder; undefined otherwise. */
  private tryClassEscape(): ClassBuilder | undefined {
    const c = this.peek();
    if (c === -1) return undefined;
    const b = new ClassBuilder();
    const ch = String.fromCodePoint(c);
    if ("dswDSW".includes(ch)) {
      this.pos++;
      b.addRanges(PERL[ch.toLowerCase()] as Range[], c < 0x61);
      return b;
    }
    if (c === 0x70 /* p */ || c === 0x50 /* P */) {
      const start = this.pos - 1;
      this.pos++;
      let name: string;
      if (this.peek() === 0x7b) {
        const close = this.cps.indexOf(0x7d, this.pos);
        if (close < 0) this.err("invalid character class range", this.rest(start));
        name = String.fromCodePoint(...this.cps.slice(this.pos + 1, close));
        this.pos = close + 1;
      } else {
        if (this.peek() === -1) this.err("invalid character class range", this.rest(start));
        name = String.fromCodePoint(this.peek());
        this.pos++;
      }
      let negate = c === 0x50;
      if (name.startsWith("^")) {
        negate = !negate;
        name = name.slice(1);
      }
      const t = unicodeClass(name);
      if (!t) this.err("invalid character class range", this.rest(start).slice(0, this.pos - start));
      b.addTest(t, negate);
      return b;
    }
    return undefined;
  }

  /** A single escaped character (the backslash is at this.pos). */
  private parseEscapeChar(): number {
    const start = this.pos;
    this.pos++;
    const c = this.peek();
    this.pos++;
    switch (c) {
      case 0x61:
        return 7;
      case 0x66:
        return 12;
      case 0x74:
        return 9;
      case 0x6e:
        return 10;
      case 0x72:
        return 13;
      case 0x76:
        return 11;
      case 0x78 /* x */:
        {
          if (this.peek() === 0x7b) {
            const close = this.cps.indexOf(0x7d, this.pos);
            const hex = close < 0 ? "" : String.fromCodePoint(...this.cps.slice(this.pos + 1, close));
            if (!/^[0-9a-fA-F]+$/.test(hex) || Number.parseInt(hex, 16) > 0x10ffff) {
              this.err("invalid escape sequence", this.rest(start).slice(0, Math.max(2, close - start + 1)));
            }
            this.pos = close + 1;
            return Number.parseInt(hex, 16);
          }
          const hex = String.fromCodePoint(...this.cps.slice(this.pos, this.pos + 2));
          if (!/^[0-9a-fA-F]{2}$/.test(hex))
            this.err("invalid escape sequence", this.rest(start).slice(0, 4));
          this.pos += 2;
          return Number.parseInt(hex, 16);
        }
      case 0x30: {
        // \0, \01, \012: up to two more octal digits.
        let v = 0;
        for (let k = 0; k < 2 && this.peek() >= 0x30 && this.peek() <= 0x37; k++) {
          v = v * 8 + (this.peek() - 0x30);
          this.pos++;
        }
        return v;
      }
    }
    if (c >= 0x31 && c <= 0x37) {
      // Octal \1.. only when followed by more octal digits (otherwise a backreference: unsupported).
      if (this.peek() >= 0x30 && this.peek() <= 0x37) {
        let v = c - 0x30;
        for (let k = 0; k < 2 && this.peek() >= 0x30 && this.peek() <= 0x37; k++) {
          v = v * 8 + (this.peek() - 0x30);
          this.pos++;
        }
        return v;
      }
      this.err("invalid escape sequence", this.rest(start).slice(0, 2));
    }
    if (c !== -1 && c < 0x80 && !/[0-9A-Za-z]/.test(String.fromCharCode(c))) return c;
    this.err("invalid escape sequence", this.rest(start).slice(0, 2));
  }

  private parseClass(): RegexNode {
    const start = this.pos;
    this.pos++;
    let negated = false;
    if (this.peek() === 0x5e) {
      negated = true;
      this.pos++;
    }
    const b = new ClassBuilder();
    let first = true;
    for (;;) {
      const c = this.peek();
      if (c === -1) this.err("missing closing ]", this.rest(start));
      if (c === 0x5d && !first) {
        this.pos++;
        break;
      }
      first = false;
      // POSIX class [:name:]
      if (c === 0x5b && this.peek(1) === 0x3a) {
        const close = this.findPosixEnd();
        if (close > 0) {
          let name = String.fromCodePoint(...this.cps.slice(this.pos + 2, close));
          let neg = false;
          if (name.startsWith("^")) {
            neg = true;
            name = name.slice(1);
          }
          const rs = POSIX[name];
          if (!rs)
            this.err(
              "invalid character class range",
              String.fromCodePoint(...this.cps.slice(this.pos, close + 2)),
            );
          b.addRanges(rs, neg);
          this.pos = close + 2;
          continue;
        }
      }
      const itemStart = this.pos;
      let lo: number;
      if (c === 0x5c) {
        this.pos++;
        const cls = this.tryClassEscape();
        if (cls) {
          b.ranges.push(...cls.ranges);
          b.tests.push(...cls.tests);
          continue;
        }
        this.pos = itemStart;
        lo = this.parseEscapeChar();
      } else {
        lo = c;
        this.pos++;
      }
      let hi = lo;
      if (this.peek() === 0x2d && this.peek(1) !== 0x5d && this.peek(1) !== -1) {
        this.pos++;
        const h = this.peek();
        if (h === 0x5c) {
          hi = this.parseEscapeChar();
        } else {
          hi = h;
          this.pos++;
        }
        if (hi < lo)
          this.err(
            "invalid character class range",
            String.fromCodePoint(...this.cps.slice(itemStart, this.pos)),
          );
      }
      b.addRange(lo, hi);
    }
    return { t: "char", test: b.build(negated, this.flags.i) };
  }

  private findPosixEnd(): number {
    for (let i = this.pos + 2; i + 1 < this.cps.length; i++) {
      if (this.cps[i] === 0x3a && this.cps[i + 1] === 0x5d) return i;
      if (this.cps[i] === 0x5d) return -1;
    }
    return -1;
  }
}

/** Parses an RE2 pattern; throws RegexSyntaxError. */
export function parseRegex(src: string): RegexNode {
  return new RegexParser(src).parse();
}
