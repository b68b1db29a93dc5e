/**
 * The two error classes that compile() and run() may throw. Nothing else escapes them.
 */

/** Position of a compile error in the source: 1-based line and column, 0-based UTF-16 offset. */
export interface SourcePosition {
  readonly line: number;
  readonly column: number;
  readonly offset: number;
}

/** Raised by {@link compile}: lexing, parsing, node or size caps, type checking, constant folding. */
export class FilterCompileError extends Error {
  /** Stable machine-readable code. */
  readonly code = "invalid_filter" as const;
  /** 1-based line of the offending token. */
  readonly line: number;
  /** 1-based column (in characters) of the offending token. */
  readonly column: number;
  /** 0-based offset (UTF-16 code units) of the offending token. */
  readonly offset: number;

  constructor(message: string, source: string, offset: number) {
    const pos = positionOf(source, offset);
    super(`${message} (${pos.line}:${pos.column})`);
    this.name = "FilterCompileError";
    this.line = pos.line;
    this.column = pos.column;
    this.offset = pos.offset;
    /** The message without the position suffix. */
    this.reason = message;
  }

  /** The message without the `(line:column)` suffix. */
  readonly reason: string;
}

/** Raised by `Program.run`: a type error on a dynamic value, index out of range, budget exceeded, ... */
export class FilterRuntimeError extends Error {
  /** Stable machine-readable code. */
  readonly code = "filter_runtime" as const;

  constructor(message: string) {
    super(message);
    this.name = "FilterRuntimeError";
  }
}

/** Computes line and column (both 1-based) of an offset in a source text. */
export function positionOf(source: string, offset: number): SourcePosition {
  const clamped = Math.max(0, Math.min(offset, source.length));
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < clamped; i++) {
    if (source.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  // Columns count code points, not UTF-16 units.
  const column = [...source.slice(lineStart, clamped)].length + 1;
  return { line, column, offset: clamped };
}

/** Internal: a compile error before it is bound to a source text. */
export class CompileFailure extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

/** A compile failure for exceeding a size cap (nesting depth): never deferred to run time. */
export class LimitFailure extends CompileFailure {}

/** Throws a runtime error; a helper usable in expression position. */
export function fail(message: string): never {
  throw new FilterRuntimeError(message);
}
