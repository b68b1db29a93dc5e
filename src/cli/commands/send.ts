import type { Command } from "commander";
import type { OutgoingMessage } from "../../contract/types.js";
import { UsageError } from "../errors.js";
import { type LineFormat, sendLines } from "../input/bulk.js";
import {
  addMessageOptions,
  bodyInput,
  hasMetadata,
  type MessageFlags,
  metadata,
} from "../input/message-flags.js";
import { readAll } from "../input/read.js";
import { addBrokerOptions, type BrokerFlags, duration } from "../options.js";
import { okResult } from "../output/original.js";
import { emit, withBroker } from "../run.js";

interface SendFlags extends BrokerFlags, MessageFlags {
  ttl?: number;
  lines?: boolean;
  ndjson?: boolean;
}

function lineFormat(words: string[], f: SendFlags): LineFormat | undefined {
  if (f.lines && f.ndjson) throw new UsageError("--lines and --ndjson exclude each other");
  const format = f.ndjson ? "ndjson" : f.lines ? "lines" : undefined;
  if (!format) return undefined;
  if (words.length > 0 && words[0] !== "-") throw new UsageError(`--${format} reads - (stdin) or --file`);
  if (format === "ndjson" && hasMetadata(f))
    throw new UsageError("--ndjson lines carry their own fields: drop the message flags");
  if (f.messageId) throw new UsageError("--message-id would give every line the same id");
  return format;
}

function summary(seqs: number[]): string {
  const none = seqs.filter((s) => s === 0).length;
  if (seqs.length === 1) return none ? "sent: seq 0 (no subscription accepted it)" : `sent: seq ${seqs[0]}`;
  const accepted = seqs.length - none;
  return `sent ${seqs.length} messages${none ? ` (${accepted} accepted, ${none} with seq 0)` : ""}`;
}

/** `mqlite send <queue> <body|->`: one message, or a bulk load of lines. */
export function registerSend(program: Command): void {
  const cmd = program
    .command("send")
    .summary("send a message (or many) to a queue or topic")
    .description("send a message to a queue or publish it to a topic; - reads stdin")
    .argument("<queue>", "queue or topic")
    .argument(
      "[body...]",
      "the body as text (words joined by spaces), or - to read stdin (omit with --file)",
    );
  addMessageOptions(cmd)
    .option("--ttl <duration>", "time to live, e.g. 1h (the queue's default TTL is a ceiling)", duration())
    .option("--lines", "bulk: every line of stdin or --file is one message body")
    .option(
      "--ndjson",
      'bulk: every line is one message in the wire shape, e.g. {"body":"aGk=","subject":"x"}',
    )
    .addHelpText(
      "after",
      `
Examples:
  mqlite send orders '{"id":42}' --content-type application/json --group customer-7
  curl -s https://example.org/x.json | mqlite send orders -
  mqlite send orders --file batch.ndjson --ndjson     (one Send per 256 lines, progress on a terminal)`,
    );
  addBrokerOptions(cmd).action(async (queue: string, words: string[], flags: SendFlags) => {
    const format = lineFormat(words, flags);
    const input = bodyInput(words, flags);
    const ttlMs = Math.trunc(flags.ttl ?? 0);
    const options = ttlMs ? { ttlMs } : {};
    let seqs: number[];
    if (format) {
      if ("text" in input) throw new UsageError(`--${format} reads - (stdin) or --file`);
      seqs = await withBroker(flags, (broker) =>
        sendLines(broker, queue, input, format, metadata(flags), options),
      );
    } else {
      // The body is read before the broker is opened: nothing is held while stdin is typed.
      const message: OutgoingMessage = {
        ...metadata(flags),
        body: "text" in input ? input.text : await readAll(input),
      };
      seqs = await withBroker(flags, (broker) => broker.send(queue, message, options));
    }
    // One `ok:` line (one object) per message, as the original prints for its one message.
    const results = seqs.map((seq) =>
      okResult([
        ["queue", queue],
        ["seq", seq],
      ]),
    );
    await emit(flags, {
      text: results.map((r) => r.text).join("\n"),
      json: format ? results.map((r) => r.json) : results[0]!.json,
      human: () => summary(seqs),
      wire: { seq_numbers: seqs },
    });
  });
}
