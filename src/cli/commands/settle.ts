import type { Command } from "commander";
import type { Broker } from "../../contract/broker.js";
import { addBrokerOptions, type BrokerFlags, duration, seqNumber } from "../options.js";
import { okResult } from "../output/original.js";
import { emit, withBroker } from "../run.js";

interface SettleFlags extends BrokerFlags {
  delay?: number;
  reason?: string;
  detail?: string;
}

interface Verb {
  name: "complete" | "abandon" | "reject" | "defer" | "renew";
  summary: string;
  description: string;
  done: string;
  run(broker: Broker, queue: string, seq: number, token: string, flags: SettleFlags): Promise<void>;
  options?(cmd: Command): Command;
}

const VERBS: Verb[] = [
  {
    name: "complete",
    summary: "settle a locked message as done",
    description: "settle a locked message as done (it is deleted)",
    done: "completed",
    run: (b, q, s, t) => b.complete(q, s, t),
  },
  {
    name: "abandon",
    summary: "release a locked message for redelivery",
    description: "release a locked message for redelivery (dead-lettered at the delivery limit)",
    done: "abandoned",
    run: (b, q, s, t, f) => b.abandon(q, s, t, f.delay ? { delayMs: Math.trunc(f.delay) } : {}),
    options: (cmd) =>
      cmd.option("--delay <duration>", "hide it this long before redelivery, e.g. 60s", duration()),
  },
  {
    name: "reject",
    summary: "dead-letter a locked message",
    description: "dead-letter a locked message",
    done: "dead-lettered",
    run: (b, q, s, t, f) =>
      b.reject(q, s, t, {
        ...(f.reason !== undefined && { reason: f.reason }),
        ...(f.detail !== undefined && { description: f.detail }),
      }),
    options: (cmd) =>
      cmd
        .option("--reason <reason>", "dead-letter reason (default AppRequested)")
        .option("--detail <text>", "dead-letter description"),
  },
  {
    name: "defer",
    summary: "set a locked message aside",
    description: "set a locked message aside; only receive-deferred fetches it again",
    done: "deferred",
    run: (b, q, s, t) => b.defer(q, s, t),
  },
  {
    name: "renew",
    summary: "extend a message's lock",
    description: "extend a message's lock by the queue's lock duration",
    done: "renewed the lock of",
    run: (b, q, s, t) => b.renew(q, s, t),
  },
];

/** `mqlite complete|abandon|reject|defer|renew <queue> <seq> <lock-token>`: one command per verb. */
export function registerSettle(program: Command): void {
  for (const verb of VERBS) {
    let cmd = program
      .command(verb.name)
      .summary(verb.summary)
      .description(verb.description)
      .argument("<queue>", "queue")
      .argument("<seq>", "sequence number")
      .argument("<lock-token>", "the lock token the receive printed (receive --no-ack)");
    if (verb.options) cmd = verb.options(cmd);
    addBrokerOptions(cmd).action(
      async (queue: string, seqText: string, token: string, flags: SettleFlags) => {
        const seq = seqNumber(seqText);
        await withBroker(flags, (broker) => verb.run(broker, queue, seq, token, flags));
        const ok = okResult([
          ["action", verb.name],
          ["queue", queue],
          ["seq", seq],
        ]);
        await emit(flags, { ...ok, human: () => `${verb.done} seq ${seq}`, wire: { ok: true } });
      },
    );
  }
}
