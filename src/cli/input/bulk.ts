import type { Broker } from "../../contract/broker.js";
import { MqliteError } from "../../contract/errors.js";
import type { OutgoingMessage, SendOptions } from "../../contract/types.js";
import { decodeRequest } from "../../wire/decode.js";
import { outgoingFromWire, WireMessage } from "../../wire/message.js";
import { CommandError, UsageError } from "../errors.js";
import { Progress } from "../output/progress.js";
import { type Line, readLines, type Source } from "./read.js";

/** How each input line becomes a message. */
export type LineFormat = "lines" | "ndjson";

/** One Send (one transaction) carries at most this many messages… */
const BATCH_MESSAGES = 256;
/** …or about this many body bytes (well under the served broker's 32 MiB request cap, base64 included). */
const BATCH_BYTES = 4 * 1024 * 1024;

/** A line of NDJSON: one message in the wire shape (`body` in base64), unknown fields refused. */
export function wireLine(line: Line): OutgoingMessage {
  try {
    return outgoingFromWire(decodeRequest(WireMessage, line.text));
  } catch (err) {
    throw new UsageError(`line ${line.number}: ${(err as Error).message}`);
  }
}

function size(m: OutgoingMessage): number {
  return m.body === undefined ? 0 : typeof m.body === "string" ? Buffer.byteLength(m.body) : m.body.length;
}

/**
 * Sends every line of the input as a message, in batches of one transaction each, drawing a
 * progress bar on a terminal. `template` is the metadata every raw line carries. Returns every
 * sequence number in input order; a failure says how many messages were sent before it.
 */
export async function sendLines(
  broker: Broker,
  queue: string,
  source: Source,
  format: LineFormat,
  template: OutgoingMessage,
  options: SendOptions,
): Promise<number[]> {
  const progress = new Progress(`sending to ${queue}`);
  const seqs: number[] = [];
  let batch: OutgoingMessage[] = [];
  let bytes = 0;
  let ratio: number | undefined;
  const flush = async () => {
    if (batch.length === 0) return;
    const sent = await broker.send(queue, batch, options);
    seqs.push(...sent);
    progress.add(sent.length, ratio);
    batch = [];
    bytes = 0;
  };
  try {
    for await (const line of readLines(source)) {
      const message = format === "ndjson" ? wireLine(line) : { ...template, body: line.text };
      batch.push(message);
      bytes += size(message);
      ratio = line.ratio;
      if (batch.length >= BATCH_MESSAGES || bytes >= BATCH_BYTES) await flush();
    }
    await flush();
  } catch (err) {
    if (seqs.length === 0) throw err;
    const code = err instanceof MqliteError || err instanceof CommandError ? err.code : "internal";
    throw new CommandError(
      code,
      `${(err as Error).message} (${seqs.length} messages were sent before this, up to seq ${seqs.at(-1)})`,
      err instanceof CommandError ? err.exitCode : 1,
    );
  } finally {
    progress.finish();
  }
  return seqs;
}
