import { type Command, Option } from "commander";
import type { MessageState } from "../../contract/types.js";
import { addBrokerOptions, type BrokerFlags, integer } from "../options.js";
import { messagesJson, messagesTable } from "../output/messages.js";
import { emit, withBroker } from "../run.js";

interface PeekFlags extends BrokerFlags {
  state?: MessageState;
  from: number;
  max: number;
}

/** Characters of a body a peek table shows (JSON output always carries the whole body). */
const PREVIEW = 60;

/** `mqlite peek <queue> [--state S] [--from 0] [--max 16]`: reads without locking. */
export function registerPeek(program: Command): void {
  const cmd = program
    .command("peek")
    .summary("show messages without locking them")
    .description("show messages without locking them, in sequence order (page on with --from)")
    .argument("<queue>", "queue")
    .addOption(
      new Option("--state <state>", "only this state").choices([
        "active",
        "locked",
        "deferred",
        "scheduled",
        "dead_lettered",
        "completed",
        "cancelled",
      ]),
    )
    .option("--from <seq>", "start at this sequence number", integer(0), 0)
    .option("--max <n>", "at most this many (up to 1000)", integer(1), 16)
    .addHelpText("after", "\nExample:\n  mqlite peek orders --state dead_lettered --max 50");
  addBrokerOptions(cmd).action(async (queue: string, flags: PeekFlags) => {
    const messages = await withBroker(flags, (broker) =>
      broker.peek(queue, { fromSeq: flags.from, max: flags.max, ...(flags.state && { state: flags.state }) }),
    );
    await emit(flags, messagesJson(messages), () =>
      messages.length === 0 ? "no messages" : messagesTable(messages, { state: true, preview: PREVIEW }),
    );
  });
}
