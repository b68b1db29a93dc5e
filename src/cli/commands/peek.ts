import type { Command } from "commander";
import { NotFoundError } from "../../contract/errors.js";
import type { MessageState } from "../../contract/types.js";
import { addBrokerOptions, type BrokerFlags, integer } from "../options.js";
import { messagesJson, messagesTable } from "../output/messages.js";
import { peekedJson, peekedText } from "../output/original.js";
import { emit, RawJson, withBroker } from "../run.js";

interface PeekFlags extends BrokerFlags {
  state?: MessageState;
  from: number;
  max: number;
}

/** Characters of a body a peek table shows (JSON output always carries the whole body). */
const PREVIEW = 60;

const STATES = new Set<string>([
  "active",
  "locked",
  "deferred",
  "scheduled",
  "dead_lettered",
  "completed",
  "cancelled",
]);

/** `mqlite peek <queue> [--state S] [--from 0] [--max 16]`: reads without locking. */
export function registerPeek(program: Command): void {
  const cmd = program
    .command("peek")
    .summary("show messages without locking them")
    .description("show messages without locking them, in sequence order (page on with --from)")
    .argument("<queue>", "queue")
    .option(
      "--state <state>",
      "only this state: active, locked, deferred, scheduled, dead_lettered (another matches nothing)",
    )
    .option("--from <seq>", "start at this sequence number", integer(), 0)
    .option("--max <n>", "at most this many (up to 1000; 0 or less means 32)", integer(), 16)
    .addHelpText("after", "\nExample:\n  mqlite peek orders --state dead_lettered --max 50");
  addBrokerOptions(cmd).action(async (queue: string, flags: PeekFlags) => {
    const max = flags.max <= 0 ? 32 : Math.min(flags.max, 1000);
    const fromSeq = Math.max(flags.from, 0);
    // As the original, an unknown queue or state is an empty page, not an error.
    const messages = !STATES.has(flags.state ?? "active")
      ? []
      : await withBroker(flags, (broker) =>
          broker.peek(queue, { fromSeq, max, ...(flags.state && { state: flags.state }) }).catch((err) => {
            if (err instanceof NotFoundError) return [];
            throw err;
          }),
        );
    await emit(flags, {
      text: peekedText(messages).trimEnd(),
      json: new RawJson(peekedJson(messages)),
      human: () =>
        messages.length === 0 ? "no messages" : messagesTable(messages, { state: true, preview: PREVIEW }),
      wire: messagesJson(messages),
    });
  });
}
