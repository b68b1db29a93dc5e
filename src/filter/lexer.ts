/**
 * Lexer for the expr language (v1.17.8 rules: numbers with `_`, strings with Go escapes, raw
 * strings, bytes literals, comments, keyword operators).
 */
import { CompileFailure } from "./errors.js";

export type TokenKind = "Identifier" | "Number" | "String" | "Bytes" | "Operator" | "Bracket" | "EOF";

export interface Token {
  kind: TokenKind;
  value: string;
  /** Offset (UTF-16 units) of the token's first character. */
  pos: number;
  /** For Bytes tokens, the byte values. */
  bytes?: Uint8Array;
}

const KEYWORD_OPERATORS = new Set([
  "not",
  "in",
  "or",
  "and",
  "matches",
  "contains",
  "startsWith",
  "endsWith",
  "let",
]);

const LETTER = /\p{L}/u;
const DIGIT = /\p{Nd}/u;

export function isSpace(c: number): boolean {
  // Go unicode.IsSpace.
  return (
    (c >= 9 && c <= 13) ||
    c === 32 ||
    c === 0x85 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000
  );
}

function isLetterCp(c: number): boolean {
  if (c < 128) return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
  return LETTER.test(String.fromCodePoint(c));
}

function isDigitCp(c: number): boolean {
  if (c < 128) return c >= 48 && c <= 57;
  return DIGIT.test(String.fromCodePoint(c));
}

/** Go utils.IsAlphaNumeric: letters, digits, `_` and `$`. */
export function isAlphaNumeric(c: number): boolean {
  return c === 95 || c === 36 || isLetterCp(c) || isDigitCp(c);
}

function isAlphabetic(c: number): boolean {
  return c === 95 || c === 36 || isLetterCp(c);
}

/** Whether a word lexes as an identifier (used for property names after `.`). */
export function isValidIdentifier(s: string): boolean {
  if (s.length === 0) return false;
  const cps = [...s].map((ch) => ch.codePointAt(0) as number);
  if (!isAlphabetic(cps[0] as number)) return false;
  return cps.every(isAlphaNumeric);
}

export interface LexOptions {
  disableIfOperator?: boolean;
}

class Lexer {
  private pos = 0;
  readonly tokens: Token[] = [];

  constructor(
    private readonly src: string,
    private readonly opts: LexOptions,
  ) {}

  private peekCp(at = this.pos): number {
    if (at >= this.src.length) return -1;
    return this.src.codePointAt(at) as number;
  }

  private cpLen(c: number): number {
    return c > 0xffff ? 2 : 1;
  }

  private error(msg: string, at: number): never {
    throw new CompileFailure(msg, at);
  }

  run(): Token[] {
    const src = this.src;
    for (;;) {
      const start = this.pos;
      const c = this.peekCp();
      if (c === -1) {
        this.tokens.push({ kind: "EOF", value: "", pos: start });
        return this.tokens;
      }
      if (isSpace(c)) {
        this.pos += this.cpLen(c);
        continue;
      }
      const ch = String.fromCodePoint(c);
      if (ch === "'" || ch === '"') {
        const value = this.scanString(ch, false);
        this.tokens.push({ kind: "String", value: value as string, pos: start });
        continue;
      }
      if (ch === "`") {
        this.scanRawString();
        continue;
      }
      if ((ch === "b" || ch === "B") && (src[this.pos + 1] === '"' || src[this.pos + 1] === "'")) {
        this.pos++;
        const bytes = this.scanString(src[this.pos] as string, true) as Uint8Array;
        this.tokens.push({ kind: "Bytes", value: "", pos: start, bytes });
        continue;
      }
      if (c >= 48 && c <= 57) {
        this.scanNumber();
        continue;
      }
      switch (ch) {
        case "?": {
          this.pos++;
          const n = src[this.pos];
          if (n === "." || n === "?") this.pos++;
          this.emit("Operator", start);
          continue;
        }
        case "/": {
          this.pos++;
          if (src[this.pos] === "/") {
            while (this.pos < src.length && src[this.pos] !== "\n") this.pos++;
            continue;
          }
          if (src[this.pos] === "*") {
            const end = src.indexOf("*/", this.pos + 1);
            if (end < 0) this.error("unclosed comment", start);
            this.pos = end + 2;
            continue;
          }
          this.emit("Operator", start);
          continue;
        }
        case "#": {
          this.pos++;
          if (src[this.pos] === "#") this.pos++;
          this.emit("Operator", start);
          const idStart = this.pos;
          while (this.pos < src.length) {
            const n = this.peekCp();
            if (!isAlphaNumeric(n)) break;
            this.pos += this.cpLen(n);
          }
          if (this.pos > idStart) this.emit("Identifier", idStart);
          continue;
        }
        case "|":
          this.pos++;
          if (src[this.pos] === "|") this.pos++;
          this.emit("Operator", start);
          continue;
        case ":":
          this.pos++;
          if (src[this.pos] === ":") this.pos++;
          this.emit("Operator", start);
          continue;
        case "(":
        case "[":
        case "{":
        case ")":
        case "]":
        case "}":
          this.pos++;
          this.emit("Bracket", start);
          continue;
        case ",":
        case ";":
        case "%":
        case "+":
        case "-":
        case "^":
          this.pos++;
          this.emit("Operator", start);
          continue;
        case "&":
        case "!":
        case "=":
        case "*":
        case "<":
        case ">": {
          this.pos++;
          const n = src[this.pos];
          if (n === "&" || n === "=" || n === "*") this.pos++;
          this.emit("Operator", start);
          continue;
        }
        case ".": {
          const n = src.charCodeAt(this.pos + 1);
          if (n >= 48 && n <= 57) {
            this.scanNumber();
            continue;
          }
          this.pos++;
          if (src[this.pos] === ".") this.pos++;
          this.emit("Operator", start);
          continue;
        }
      }
      if (isAlphaNumeric(c)) {
        this.scanIdentifier();
        continue;
      }
      this.error(`unrecognized character: U+${c.toString(16).toUpperCase().padStart(4, "0")} '${ch}'`, start);
    }
  }

  private emit(kind: TokenKind, start: number): void {
    this.tokens.push({ kind, value: this.src.slice(start, this.pos), pos: start });
  }

  private scanIdentifier(): void {
    const start = this.pos;
    while (this.pos < this.src.length) {
      const c = this.peekCp();
      if (!isAlphaNumeric(c)) break;
      this.pos += this.cpLen(c);
    }
    const word = this.src.slice(start, this.pos);
    if (KEYWORD_OPERATORS.has(word)) {
      this.emit("Operator", start);
    } else if ((word === "if" || word === "else") && !this.opts.disableIfOperator) {
      this.emit("Operator", start);
    } else {
      this.emit("Identifier", start);
    }
  }

  private acceptRun(chars: string): void {
    while (this.pos < this.src.length && chars.includes(this.src[this.pos] as string)) this.pos++;
  }

  private accept(chars: string): boolean {
    if (this.pos < this.src.length && chars.includes(this.src[this.pos] as string)) {
      this.pos++;
      return true;
    }
    return false;
  }

  private scanNumber(): void {
    const start = this.pos;
    let digits = "0123456789_";
    if (this.accept("0")) {
      if (this.accept("xX")) digits = "0123456789abcdefABCDEF_";
      else if (this.accept("oO")) digits = "01234567_";
      else if (this.accept("bB")) digits = "01_";
    }
    this.acceptRun(digits);
    const end = this.pos;
    if (this.accept(".")) {
      if (this.src[this.pos] === ".") {
        // `1..2` is a range: give the dot back.
        this.pos = end;
        this.emit("Number", start);
        return;
      }
      this.acceptRun(digits);
    }
    if (this.accept("eE")) {
      this.accept("+-");
      this.acceptRun(digits);
    }
    const next = this.peekCp();
    if (next !== -1 && isAlphaNumeric(next)) {
      this.pos += this.cpLen(next);
      this.error(`bad number syntax: ${JSON.stringify(this.src.slice(start, this.pos))}`, start);
    }
    this.emit("Number", start);
  }

  private scanRawString(): void {
    const start = this.pos;
    this.pos++;
    let out = "";
    for (;;) {
      const i = this.src.indexOf("`", this.pos);
      if (i < 0) this.error("literal not terminated", start);
      out += this.src.slice(this.pos, i);
      this.pos = i + 1;
      // A doubled backtick is a literal backtick.
      if (this.src[this.pos] === "`") {
        out += "`";
        this.pos++;
        continue;
      }
      break;
    }
    this.tokens.push({ kind: "String", value: out, pos: start });
  }

  /** Scans a quoted string (or bytes literal) starting at the quote; returns its value. */
  private scanString(quote: string, bytes: boolean): string | Uint8Array {
    const start = bytes ? this.pos - 1 : this.pos;
    const src = this.src;
    this.pos++;
    const out: number[] = []; // code points (strings) or bytes
    const enc = new TextEncoder();
    const pushText = (s: string) => {
      if (bytes) for (const b of enc.encode(s)) out.push(b);
      else for (const ch of s) out.push(ch.codePointAt(0) as number);
    };
    for (;;) {
      if (this.pos >= src.length) this.error("literal not terminated", start);
      const ch = src[this.pos] as string;
      if (ch === quote) {
        this.pos++;
        break;
      }
      if (ch === "\n") this.error("literal not terminated", start);
      if (ch === "\r") {
        // \r\n and \r are normalised to \n.
        this.pos++;
        if (src[this.pos] === "\n") this.pos++;
        out.push(10);
        continue;
      }
      if (ch !== "\\") {
        const cp = src.codePointAt(this.pos) as number;
        const s = String.fromCodePoint(cp);
        pushText(s);
        this.pos += s.length;
        continue;
      }
      const escPos = this.pos;
      this.pos++;
      const e = src[this.pos];
      this.pos++;
      switch (e) {
        case "a":
          out.push(7);
          break;
        case "b":
          out.push(8);
          break;
        case "f":
          out.push(12);
          break;
        case "n":
          out.push(10);
          break;
        case "r":
          out.push(13);
          break;
        case "t":
          out.push(9);
          break;
        case "v":
          out.push(11);
          break;
        case "\\":
          out.push(92);
          break;
        case quote:
          out.push(quote.charCodeAt(0));
          break;
        case "0":
        case "1":
        case "2":
        case "3":
        case "4":
        case "5":
        case "6":
        case "7": {
          const digits = src.slice(this.pos - 1, this.pos + 2);
          if (!/^[0-7]{3}$/.test(digits)) this.error("invalid char escape", escPos);
          this.pos += 2;
          const v = Number.parseInt(digits, 8);
          if (v > 255) this.error("invalid char escape", escPos);
          if (bytes) out.push(v);
          else out.push(v);
          break;
        }
        case "x": {
          const digits = src.slice(this.pos, this.pos + 2);
          if (!/^[0-9a-fA-F]{2}$/.test(digits)) this.error("invalid char escape", escPos);
          this.pos += 2;
          out.push(Number.parseInt(digits, 16));
          break;
        }
        case "u":
        case "U": {
          if (bytes) this.error("unable to unescape string", escPos);
          let cp: number;
          if (e === "u" && src[this.pos] === "{") {
            const close = src.indexOf("}", this.pos);
            const digits = close < 0 ? "" : src.slice(this.pos + 1, close);
            if (!/^[0-9a-fA-F]{1,6}$/.test(digits)) this.error("invalid char escape", escPos);
            this.pos = close + 1;
            cp = Number.parseInt(digits, 16);
          } else {
            const n = e === "u" ? 4 : 8;
            const digits = src.slice(this.pos, this.pos + n);
            if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(digits)) this.error("invalid char escape", escPos);
            this.pos += n;
            cp = Number.parseInt(digits, 16);
          }
          if (cp > 0x10ffff) this.error("invalid char escape", escPos);
          // Surrogate halves are not valid code points: Go encodes them as U+FFFD.
          if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
          out.push(cp);
          break;
        }
        default:
          this.error("invalid char escape", escPos);
      }
    }
    if (bytes) return Uint8Array.from(out);
    let s = "";
    for (let i = 0; i < out.length; i += 4096) s += String.fromCodePoint(...out.slice(i, i + 4096));
    return s;
  }
}

/** Splits a source text into tokens; throws CompileFailure on a lexical error. */
export function tokenize(src: string, opts: LexOptions = {}): Token[] {
  return new Lexer(src, opts).run();
}
