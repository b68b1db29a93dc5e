import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Broker } from "../contract/broker.js";
import { VERSION } from "../version.js";
import { errorResult, jsonResult } from "./result.js";
import type { McpTool } from "./tool.js";
import { adminTools } from "./tools/admin-tools.js";
import { receiveTools } from "./tools/receive-tools.js";
import { sendTools } from "./tools/send-tools.js";

const byName = new Map([...adminTools, ...sendTools, ...receiveTools].map((t) => [t.name, t]));

/** The original's 14 tools in its order, then ours. Both transports serve exactly this list. */
const ORDER = [
  "list_queues",
  "create_queue",
  "send",
  "receive",
  "complete",
  "abandon",
  "renew",
  "defer",
  "receive_deferred",
  "reject",
  "peek",
  "stats",
  "redrive",
  "purge",
  "schedule",
  "cancel",
  "subscribe",
  "list_subscriptions",
  "test_filter",
];

export const TOOLS: readonly McpTool[] = ORDER.map((name) => byName.get(name)!);

const INSTRUCTIONS = `mqlite is a message broker. Queues hold messages; a receive locks messages (peek-lock) and \
returns a seq_number and lock_token for each, which you must settle: complete when done, abandon to retry, \
reject to dead-letter, defer to set aside. Topics fan messages out to subscriptions, each a queue with an \
optional filter. Dead letters are inspected with peek state=dead_lettered and moved back with redrive. \
Errors come back as {code, message}, e.g. not_found, lock_lost, invalid_argument.`;

export interface McpOptions {
  /** Aborted when the host stops: long-polls in progress end at once. */
  stopping?: AbortSignal;
}

/** An MCP server offering every tool over `broker`; connect it to a transport. */
export function createMcpServer(broker: Broker, options: McpOptions = {}): McpServer {
  const server = new McpServer({ name: "mqlite", version: VERSION }, { instructions: INSTRUCTIONS });
  for (const t of TOOLS) {
    server.registerTool(
      t.name,
      { title: t.title, description: t.description, inputSchema: t.input, annotations: t.annotations },
      async (args: unknown, extra: { signal: AbortSignal }) => {
        const signal = options.stopping ? AbortSignal.any([extra.signal, options.stopping]) : extra.signal;
        try {
          return jsonResult(await t.run(broker, args as never, signal));
        } catch (err) {
          return errorResult(err);
        }
      },
    );
  }
  return server;
}
