import type { Command } from "commander";

/** Adds one command (with its options and action) to the program. One file per command. */
export type RegisterCommand = (program: Command) => void;

/** A command module, loaded only when needed: `mqlite send` does not pay for the HTTP server. */
export interface CommandEntry {
  /** The names (and aliases) it answers to. */
  names: string[];
  load(): Promise<RegisterCommand>;
}

/** Every command, in the order `mqlite help` lists them. Add new commands here. */
export const commands: CommandEntry[] = [
  { names: ["serve"], load: async () => (await import("./serve.js")).registerServe },
  { names: ["mcp"], load: async () => (await import("./mcp.js")).registerMcp },
  { names: ["create-queue"], load: async () => (await import("./create-queue.js")).registerCreateQueue },
  { names: ["delete-queue"], load: async () => (await import("./delete-queue.js")).registerDeleteQueue },
  {
    names: ["subscribe", "create-subscription"],
    load: async () => (await import("./subscribe.js")).registerSubscribe,
  },
  { names: ["unsubscribe"], load: async () => (await import("./unsubscribe.js")).registerUnsubscribe },
  { names: ["send"], load: async () => (await import("./send.js")).registerSend },
  { names: ["schedule"], load: async () => (await import("./schedule.js")).registerSchedule },
  { names: ["cancel"], load: async () => (await import("./cancel.js")).registerCancel },
  { names: ["receive"], load: async () => (await import("./receive.js")).registerReceive },
  {
    names: ["receive-deferred"],
    load: async () => (await import("./receive-deferred.js")).registerReceiveDeferred,
  },
  {
    names: ["complete", "abandon", "reject", "defer", "renew"],
    load: async () => (await import("./settle.js")).registerSettle,
  },
  { names: ["peek"], load: async () => (await import("./peek.js")).registerPeek },
  { names: ["metrics"], load: async () => (await import("./metrics.js")).registerMetrics },
  { names: ["list"], load: async () => (await import("./list.js")).registerList },
  {
    names: ["list-subscriptions"],
    load: async () => (await import("./list-subscriptions.js")).registerListSubscriptions,
  },
  { names: ["status"], load: async () => (await import("./status.js")).registerStatus },
  { names: ["test-filter"], load: async () => (await import("./test-filter.js")).registerTestFilter },
  { names: ["redrive"], load: async () => (await import("./redrive.js")).registerRedrive },
  { names: ["purge-dlq"], load: async () => (await import("./purge-dlq.js")).registerPurgeDlq },
  { names: ["vacuum"], load: async () => (await import("./vacuum.js")).registerVacuum },
  {
    names: ["migrate-from-mqlite"],
    load: async () => (await import("./migrate-from-mqlite.js")).registerMigrateFromMqlite,
  },
  { names: ["version"], load: async () => (await import("./version.js")).registerVersion },
];

/** The modules a command line needs: the named command's alone, or all (help, an unknown name). */
export function needed(argv: string[]): CommandEntry[] {
  const name = argv[2];
  const one = commands.find((c) => name !== undefined && c.names.includes(name));
  return one ? [one] : commands;
}
