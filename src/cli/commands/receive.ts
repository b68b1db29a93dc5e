import type { Command } from "commander";
import type { Broker } from "../../contract/broker.js";
import { LockLostError } from "../../contract/errors.js";
import type { Message } from "../../contract/types.js";
import { CommandError, UsageError } from "../errors.js";
import { addBrokerOptions, type BrokerFlags, duration, integer } from "../options.js";
import { messagesJson, messagesTable } from "../output/messages.js";
import { printJson, printText, requireDeliveringStdout } from "../output/write.js";
import { withBroker } from "../run.js";

interface ReceiveFlags extends BrokerFlags {
  max: number;
  wait: number;
  /** `--no-ack` sets this false. */
  ack: boolean;
  delete?: boolean;
}

function print(messages: Message[], flags: ReceiveFlags, locks: boolean): Promise<void> {
  if (flags.output === "json") return printJson(messagesJson(messages));
  return printText(messages.length === 0 ? "no messages" : messagesTable(messages, { locks }));
}

/** Settles what was printed; a message whose lock was lost meanwhile is an error (it will come again). */
async function completeAll(broker: Broker, queue: string, messages: Message[]): Promise<void> {
  const items = messages.map((m) => ({ seqNumber: m.seqNumber, lockToken: m.lockToken ?? "" }));
  const lost = (await broker.completeBatch(queue, items)).filter((r) => !r.ok).map((r) => r.seqNumber);
  if (lost.length > 0)
    throw new LockLostError(
      `mqlite: could not complete seq ${lost.join(", ")} (lock lost: it will be delivered again)`,
    );
}

/** Gives the messages back untouched (the delivery never reached anyone). Best effort. */
async function release(broker: Broker, queue: string, messages: Message[]): Promise<void> {
  for (const m of messages) {
    await broker.abandon(queue, m.seqNumber, m.lockToken ?? "", { countDelivery: false }).catch(() => {});
  }
}

/**
 * `mqlite receive <queue>`: takes messages and prints them. By default they are completed
 * (CompleteBatch) only once stdout has accepted the output, so a failed write loses nothing.
 */
export function registerReceive(program: Command): void {
  const cmd = program
    .command("receive")
    .summary("receive messages, print them, complete them")
    .description("receive messages and print them; they are completed once printed (see --no-ack, --delete)")
    .argument("<queue>", "queue (or subscription)")
    .option("--max <n>", "at most this many messages (up to 256)", integer(1), 1)
    .option(
      "--wait <duration>",
      "long-poll this long when none is ready, e.g. 20s (at most 20s)",
      duration(),
      0,
    )
    .option("--no-ack", "keep the locks and print the lock tokens (settle later with complete, abandon, …)")
    .option("--delete", "receive-and-delete: removed as they are taken, no lock (lost if this process dies)")
    .addHelpText(
      "after",
      `
Examples:
  mqlite receive orders --max 10 --wait 20s --output json | jq -r '.[].body | @base64d'
  mqlite receive orders --no-ack           # then: mqlite complete orders <seq> <lock-token>`,
    );
  addBrokerOptions(cmd).action(async (queue: string, flags: ReceiveFlags) => {
    if (flags.delete && !flags.ack) throw new UsageError("--delete and --no-ack exclude each other");
    // Refuse before taking anything: printing is how the messages are delivered (with --no-ack
    // only the tokens would be lost, and the locks lapse).
    if (flags.ack || flags.delete) requireDeliveringStdout();
    await withBroker(flags, async (broker) => {
      const messages = await broker.receive(queue, {
        maxMessages: flags.max,
        waitMs: flags.wait,
        mode: flags.delete ? "receive-and-delete" : "peek-lock",
      });
      const peekLock = !flags.delete;
      const settle = peekLock && flags.ack;
      try {
        await print(messages, flags, peekLock && !flags.ack);
      } catch (err) {
        // Nobody saw these messages or their tokens: hand them back rather than let the locks lapse.
        if (peekLock) await release(broker, queue, messages);
        const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
        const fate = peekLock ? "they were given back" : "they were deleted (receive-and-delete)";
        throw new CommandError(
          "stdout_failed",
          `stdout failed (${code}) with ${messages.length} message(s) received: ${fate}`,
        );
      }
      if (settle && messages.length > 0) await completeAll(broker, queue, messages);
    });
  });
}
