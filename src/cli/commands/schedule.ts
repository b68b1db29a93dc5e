import type { Command } from "commander";
import { parseGoDurationMs } from "../duration.js";
import { UsageError } from "../errors.js";
import { addMessageOptions, bodyInput, type MessageFlags, metadata } from "../input/message-flags.js";
import { readAll } from "../input/read.js";
import { addBrokerOptions, type BrokerFlags, duration } from "../options.js";
import { instant } from "../output/format.js";
import { rfc3339Nano } from "../output/go.js";
import { okResult } from "../output/original.js";
import { emit, withBroker } from "../run.js";

interface ScheduleFlags extends BrokerFlags, MessageFlags {
  at?: string;
  ttl?: number;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * `--at` as the original reads it: an RFC 3339 instant (`2030-01-02T15:04:05Z`), else a Go
 * duration from now (`90s`, `1h30m`); strictly in the future. Epoch milliseconds.
 */
export function deliveryTime(value: string, now = Date.now()): number {
  let at: number;
  if (RFC3339.test(value) && !Number.isNaN(Date.parse(value))) {
    at = Math.trunc(Date.parse(value));
  } else {
    try {
      at = now + Math.trunc(parseGoDurationMs(value));
    } catch {
      throw new UsageError(
        `invalid --at "${value}": want RFC3339 (2026-01-02T15:04:05Z) or a duration (30m)`,
      );
    }
  }
  if (at <= now)
    throw new UsageError(`--at must be in the future (got ${RFC3339.test(value) ? value : rfc3339Nano(at)})`);
  return at;
}

/** `mqlite schedule <queue> <body> --at T`: a message delivered at a later time. */
export function registerSchedule(program: Command): void {
  const cmd = program
    .command("schedule")
    .summary("send a message deliverable at a later time")
    .description("send a message that becomes deliverable at --at (cancel it with its seq)")
    .argument("<queue>", "queue or topic")
    .argument("[body...]", "the body as text (words joined by spaces), or - to read stdin (omit with --file)")
    .option("--at <time>", "required: RFC 3339 time, or a duration from now (90s, 1h30m)");
  addMessageOptions(cmd)
    .option("--ttl <duration>", "time to live, counted from the delivery time", duration())
    .addHelpText(
      "after",
      "\nExamples:\n  mqlite schedule reminders 'call back' --at 2h\n  mqlite schedule reminders 'x' --at 2030-01-02T09:00:00Z",
    );
  addBrokerOptions(cmd).action(async (queue: string, words: string[], flags: ScheduleFlags) => {
    if (flags.at === undefined)
      throw new UsageError(
        "usage: schedule <queue> <body|-> --at <RFC3339|duration> [--file f --message-id id --group g --subject s]",
      );
    const at = deliveryTime(flags.at);
    const input = bodyInput(words, flags);
    const message = { ...metadata(flags), body: "text" in input ? input.text : await readAll(input) };
    const ttlMs = Math.trunc(flags.ttl ?? 0);
    const seqs = await withBroker(flags, (broker) =>
      broker.schedule(queue, message, at, ttlMs ? { ttlMs } : {}),
    );
    const ok = okResult([
      ["queue", queue],
      ["seq", seqs[0]!],
      ["at", rfc3339Nano(at)],
    ]);
    await emit(flags, {
      ...ok,
      human: () => `scheduled: seq ${seqs[0]} at ${instant(at)}`,
      wire: { seq_numbers: seqs },
    });
  });
}
