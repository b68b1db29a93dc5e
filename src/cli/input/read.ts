import { createReadStream, statSync } from "node:fs";
import { open } from "node:fs/promises";
import { createInterface } from "node:readline";
import { UsageError } from "../errors.js";

/** The largest single body `send -` / `--file` reads (the broker's own limit is usually lower). */
export const MAX_INPUT_BYTES = 16 * 1024 * 1024;

/** Where message input comes from: `-` (stdin) or a file. */
export type Source = { kind: "stdin" } | { kind: "file"; path: string };

export function describe(source: Source): string {
  return source.kind === "stdin" ? "stdin" : source.path;
}

/** Reads the whole input as one body, failing past `cap` bytes (without reading much further). */
export async function readAll(source: Source, cap = MAX_INPUT_BYTES): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  const handle = source.kind === "file" ? await openFile(source.path) : undefined;
  const stream = handle ? handle.createReadStream() : process.stdin;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > cap)
        throw new UsageError(
          source.kind === "stdin"
            ? "stdin body exceeds the 16 MiB CLI limit; use --file for larger messages"
            : `${describe(source)} is over ${cap} bytes`,
        );
      chunks.push(chunk);
    }
  } finally {
    if (handle) await handle.close().catch(() => {});
    else process.stdin.destroy();
  }
  return Buffer.concat(chunks);
}

async function openFile(path: string) {
  try {
    return await open(path, "r");
  } catch (err) {
    throw new UsageError(
      `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
}

/** One input line, with how far through the input it is when the size is known (a file). */
export interface Line {
  text: string;
  number: number;
  /** 0..1 for a file, absent for stdin. */
  ratio?: number;
}

/** The input's lines, streamed (CR LF accepted); blank lines are skipped but counted. */
export async function* readLines(source: Source): AsyncGenerator<Line> {
  let size: number | undefined;
  let stream: NodeJS.ReadableStream & { bytesRead?: number };
  if (source.kind === "file") {
    try {
      size = statSync(source.path).size;
    } catch (err) {
      throw new UsageError(`cannot read ${source.path}: ${(err as NodeJS.ErrnoException).code}`);
    }
    stream = createReadStream(source.path);
  } else {
    stream = process.stdin;
  }
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  let number = 0;
  try {
    for await (const text of lines) {
      number++;
      if (text.trim() === "") continue;
      const ratio = size ? Math.min(1, (stream.bytesRead ?? 0) / size) : undefined;
      yield ratio === undefined ? { text, number } : { text, number, ratio };
    }
  } finally {
    lines.close();
    if (source.kind === "stdin") process.stdin.destroy();
  }
}
