import type { Command } from "commander";
import type { Broker } from "../../contract/broker.js";
import { LockLostError } from "../../contract/errors.js";
import type { Message } from "../../contract/types.js";
import { CommandError, UsageError } from "../errors.js";
import { addBrokerOptions, type BrokerFlags, duration, integer } from "../options.js";
import { messagesJson, messagesTable } from "../output/messages.js";
import { receivedJson, receivedText } from "../output/original.js";
import { requireDeliveringStdout } from "../output/write.js";
import { LockRenewer } from "../renewer.js";
import { emit, RawJson, withBroker } from "../run.js";

/** The longest long-poll: a longer --wait is cut to it, as the original does. */
const MAX_WAIT_MS = 20_000;

interface ReceiveFlags extends BrokerFlags {
  max: number;
  wait: number;
  /** `--no-ack` sets this false. */
  ack: boolean;
  delete?: boolean;
}

function print(messages: Message[], flags: ReceiveFlags, withToken: boolean): Promise<void> {
  const view = withToken ? "received-with-token" : "received";
  return emit(flags, {
    text: receivedText(messages, withToken).trimEnd(),
    json: new RawJson(receivedJson(messages, view)),
    human: () => (messages.length === 0 ? "no messages" : messagesTable(messages, { locks: withToken })),
    wire: messagesJson(messages),
  });
}

/** Settles what was printed, in one CompleteBatch; a message whose lock was lost meanwhile is an error. */
async function completeAll(broker: Broker, queue: string, messages: Message[]): Promise<void> {
  const items = messages.map((m) => ({ seqNumber: m.seqNumber, lockToken: m.lockToken ?? "" }));
  const lost = (await broker.completeBatch(queue, items)).filter((r) => !r.ok).map((r) => r.seqNumber);
  if (lost.length > 0)
    throw new LockLostError(
      `${lost.length} of ${messages.length} message(s) failed to settle (seq [${lost.join(" ")}]) — they will redeliver`,
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
    .option("--max <n>", "at most this many messages (up to 256; 0 or less means 1)", integer(), 1)
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
    if (flags.delete && !flags.ack) throw new UsageError("--delete and --no-ack are mutually exclusive");
    const peekLock = !flags.delete;
    const settle = peekLock && flags.ack;
    // Refuse before taking anything: in auto-ack mode printing is how the messages are delivered.
    // (--delete drains on purpose; --no-ack keeps the locks, which lapse.)
    if (settle) requireDeliveringStdout();
    await withBroker(flags, async (broker) => {
      const messages = await broker.receive(queue, {
        maxMessages: flags.max > 0 ? flags.max : 1,
        waitMs: Math.min(Math.max(Math.trunc(flags.wait), 0), MAX_WAIT_MS),
        mode: flags.delete ? "receive-and-delete" : "peek-lock",
      });
      // The leases are kept alive from before the first byte is written until the batch is settled.
      const renewer = settle ? new LockRenewer(broker, queue, messages).start() : undefined;
      try {
        await printAndSettle(broker, queue, messages, flags, { peekLock, settle });
      } finally {
        await renewer?.stop();
      }
    });
  });
}

async function printAndSettle(
  broker: Broker,
  queue: string,
  messages: Message[],
  flags: ReceiveFlags,
  { peekLock, settle }: { peekLock: boolean; settle: boolean },
): Promise<void> {
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
}
