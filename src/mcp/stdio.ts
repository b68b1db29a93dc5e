import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Broker } from "../contract/broker.js";
import { createMcpServer } from "./registry.js";

/**
 * Serves the tools over stdio (newline-delimited JSON-RPC on stdin/stdout) until the client closes
 * stdin. Nothing else may write to stdout meanwhile: logs go to stderr.
 */
export async function serveStdio(broker: Broker): Promise<void> {
  const server = createMcpServer(broker);
  const transport = new StdioServerTransport();
  await server.connect(transport);
  await new Promise<void>((resolve) => {
    server.server.onclose = () => resolve();
    process.stdin.once("end", () => resolve());
    process.stdin.once("close", () => resolve());
  });
  await server.close();
}
