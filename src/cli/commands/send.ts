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
import { emit, withBroker } from "../run.js";

interface SendFlags extends BrokerFlags, MessageFlags {
  ttl?: number;
  lines?: boolean;
  ndjson?: boolean;
}

function lineFormat(body: string | undefined, f: SendFlags): LineFormat | undefined {
  if (f.lines && f.ndjson) throw new UsageError("--lines and --ndjson exclude each other");
  const format = f.ndjson ? "ndjson" : f.lines ? "lines" : undefined;
  if (!format) return undefined;
  if (body !== undefined && body !== "-") throw new UsageError(`--${format} reads - (stdin) or --file`);
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
    .argument("[body]", "the body as text, or - to read it from stdin (omit with --file)");
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
  addBrokerOptions(cmd).action(async (queue: string, body: string | undefined, flags: SendFlags) => {
    const format = lineFormat(body, flags);
    const input = bodyInput(body, flags);
    const options = flags.ttl ? { ttlMs: flags.ttl } : {};
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
    await emit(flags, { seq_numbers: seqs }, () => summary(seqs));
  });
}
