import type { Command } from "commander";
import { subscriptionToWire } from "../../wire/results.js";
import { addBrokerOptions, type BrokerFlags } from "../options.js";
import { padRight } from "../output/go.js";
import { table } from "../output/table.js";
import { emit, withBroker } from "../run.js";

/** `mqlite list-subscriptions`: every subscription with its filter. */
export function registerListSubscriptions(program: Command): void {
  const cmd = program
    .command("list-subscriptions")
    .summary("list subscriptions with their filters")
    .description("list every subscription by topic, with its filter");
  addBrokerOptions(cmd).action(async (flags: BrokerFlags) => {
    const subs = await withBroker(flags, (broker) => broker.listSubscriptions());
    await emit(flags, {
      text:
        subs.length === 0
          ? "(no subscriptions)"
          : subs
              .map(
                (s) =>
                  `${padRight(s.name, 20)} topic=${padRight(s.topic, 20)} filter=${s.filter || "(match all)"}`,
              )
              .join("\n"),
      json: subs.map((s) => ({ topic: s.topic, name: s.name, ...(s.filter && { expr: s.filter }) })),
      human: () =>
        subs.length === 0
          ? "no subscriptions"
          : table(
              ["TOPIC", "NAME", "KIND", "PAUSED", "FILTER"],
              subs.map((s) => [s.topic, s.name, s.kind, s.paused ? "yes" : "", s.filter ?? "(all messages)"]),
            ),
      wire: { subscriptions: subs.map(subscriptionToWire) },
    });
  });
}
