import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { compiledCli } from "../cli/compiled.js";
import { cleanEnv } from "../cli/harness.js";
import { tempDir } from "../support/temp.js";
import { toolScenario } from "./scenario.js";

// `mqlite mcp` as a real child process, opening MQLITE_DB itself; the test reads the same file.
toolScenario("stdio, mqlite mcp with MQLITE_DB", {
  async start() {
    const tmp = tempDir("mqlite-mcp-");
    const file = tmp.file("mq.db");
    const broker = await openBroker(file, { logger: silentLogger });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [compiledCli(), "mcp"],
      env: { ...cleanEnv(), MQLITE_DB: file },
      stderr: "pipe",
    });
    const client = new Client({ name: "mqlite-test", version: "1.0.0" });
    await client.connect(transport);
    return {
      client,
      broker,
      stop: async () => {
        await client.close();
        await broker.close();
        tmp.cleanup();
      },
    };
  },
});
