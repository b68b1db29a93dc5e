/**
 * The one-line usage each command prints (after `error: `) when it is given the wrong number of
 * arguments, worded as the original's so scripts and people see the same text.
 */
const USAGE: Record<string, string> = {
  "create-queue":
    "create-queue <name> [--lock 30s --max-delivery 10 --ttl 1h --dedup 5m --ordering standard --dlq-max-age 336h --dlq-max-count 1000 --dlq-max-bytes 10485760]",
  subscribe: "subscribe <topic> <subscription> [--expr 'predicate']",
  send: "send <queue> <body|-> [--file f --message-id id --group g --subject sub --reply-to addr --ttl 1h]",
  schedule:
    "schedule <queue> <body|-> --at <RFC3339|duration> [--file f --message-id id --group g --subject s]",
  cancel: "cancel <queue> <seq>",
  receive: "receive <queue> [--max 1 --wait 5s --no-ack | --delete]",
  "receive-deferred": "receive-deferred <queue> --seq 42,57",
  complete: "<verb> <queue> <seq> <lock-token>",
  abandon: "<verb> <queue> <seq> <lock-token>",
  reject: "<verb> <queue> <seq> <lock-token>",
  defer: "<verb> <queue> <seq> <lock-token>",
  renew: "<verb> <queue> <seq> <lock-token>",
  peek: "peek <queue> [--state s --from seq --max n]",
  metrics: "metrics <queue>",
  list: "list",
  "list-subscriptions": "list-subscriptions  (takes no arguments)",
  status: "status  (takes no arguments)",
  "test-filter": "test-filter <expr> [<body>|--file f --subject s --group g --prop k=v,k=v]",
  redrive: "redrive <queue> [--to target --max n --older-than 1h]",
  "purge-dlq": "purge-dlq <queue> [--max n | --older-than 1h | --all]",
  vacuum: "vacuum [--full]   (the DB comes from MQLITE_DB)",
};

/** `usage: …` for a command; `fallback` (the parser's own usage) for commands the original lacks. */
export function usageLine(command: string, fallback: string): string {
  return `usage: ${USAGE[command] ?? `${command} ${fallback}`}`;
}
