import type { Command } from "commander";
import { UsageError } from "../errors.js";
import { addBrokerOptions, type BrokerFlags, seqList } from "../options.js";
import { messagesJson, messagesTable } from "../output/messages.js";
import { receivedJson, receivedText } from "../output/original.js";
import { emit, RawJson, withBroker } from "../run.js";

interface ReceiveDeferredFlags extends BrokerFlags {
  seq?: number[];
}

/** `mqlite receive-deferred <queue> --seq 42,57`: locks deferred messages by seq and prints their tokens. */
export function registerReceiveDeferred(program: Command): void {
  const cmd = program
    .command("receive-deferred")
    .summary("take deferred messages by sequence number")
    .description("take deferred messages by sequence number; they come back locked, with their lock tokens")
    .argument("<queue>", "queue")
    .option("--seq <seqs>", "required: sequence numbers, comma-separated (repeatable)", seqList)
    .addHelpText(
      "after",
      "\nExample:\n  mqlite receive-deferred orders --seq 42,57   # then complete each with its lock token",
    );
  addBrokerOptions(cmd).action(async (queue: string, flags: ReceiveDeferredFlags) => {
    if (flags.seq === undefined) throw new UsageError("usage: receive-deferred <queue> --seq 42,57");
    if (flags.seq.length === 0) throw new UsageError("--seq listed no numbers");
    const seqs = flags.seq;
    const messages = await withBroker(flags, (broker) => broker.receiveDeferred(queue, seqs));
    await emit(flags, {
      text: receivedText(messages, true).trimEnd(),
      json: new RawJson(receivedJson(messages, "received-with-token")),
      human: () =>
        messages.length === 0
          ? "no deferred messages with those numbers"
          : messagesTable(messages, { locks: true }),
      wire: messagesJson(messages),
    });
  });
}
