import { type Command, InvalidArgumentError } from "commander";
import { parseGoDuration } from "../duration.js";
import { addMessageOptions, bodyInput, type MessageFlags, metadata } from "../input/message-flags.js";
import { readAll } from "../input/read.js";
import { addBrokerOptions, type BrokerFlags, duration } from "../options.js";
import { instant } from "../output/format.js";
import { emit, withBroker } from "../run.js";

interface ScheduleFlags extends BrokerFlags, MessageFlags {
  at: number;
  ttl?: number;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})$/;

/** `--at`: an RFC 3339 instant (`2030-01-02T15:04:05Z`), or a Go duration from now (`90s`, `1h30m`). */
export function deliveryTime(value: string, now = Date.now()): number {
  const text = value.trim();
  if (RFC3339.test(text)) {
    const at = Date.parse(text);
    if (Number.isNaN(at)) throw new InvalidArgumentError("not a valid RFC 3339 time");
    if (at <= now) throw new InvalidArgumentError("must be in the future");
    return at;
  }
  let ms: number;
  try {
    ms = parseGoDuration(text);
  } catch {
    throw new InvalidArgumentError(
      "use an RFC 3339 time (2030-01-02T15:04:05Z) or a duration from now (90s)",
    );
  }
  if (ms <= 0) throw new InvalidArgumentError("must be in the future");
  return now + ms;
}

/** `mqlite schedule <queue> <body> --at T`: a message delivered at a later time. */
export function registerSchedule(program: Command): void {
  const cmd = program
    .command("schedule")
    .summary("send a message deliverable at a later time")
    .description("send a message that becomes deliverable at --at (cancel it with its seq)")
    .argument("<queue>", "queue or topic")
    .argument("[body]", "the body as text, or - to read it from stdin (omit with --file)")
    .requiredOption("--at <time>", "RFC 3339 time, or a duration from now (90s, 1h30m)", (v) =>
      deliveryTime(v),
    );
  addMessageOptions(cmd)
    .option("--ttl <duration>", "time to live, counted from the delivery time", duration())
    .addHelpText(
      "after",
      "\nExamples:\n  mqlite schedule reminders 'call back' --at 2h\n  mqlite schedule reminders 'x' --at 2030-01-02T09:00:00Z",
    );
  addBrokerOptions(cmd).action(async (queue: string, body: string | undefined, flags: ScheduleFlags) => {
    const input = bodyInput(body, flags);
    const message = { ...metadata(flags), body: "text" in input ? input.text : await readAll(input) };
    const seqs = await withBroker(flags, (broker) =>
      broker.schedule(queue, message, flags.at, flags.ttl ? { ttlMs: flags.ttl } : {}),
    );
    await emit(flags, { seq_numbers: seqs }, () => `scheduled: seq ${seqs[0]} at ${instant(flags.at)}`);
  });
}
