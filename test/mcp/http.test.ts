import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { serveInProcess, TOKEN } from "../cli/harness.js";
import { toolScenario } from "./scenario.js";

// The same tools at /mcp on a served broker, behind its Bearer auth.
toolScenario("Streamable HTTP, /mcp on a served broker", {
  async start() {
    const served = await serveInProcess();
    const client = new Client({ name: "mqlite-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
      }),
    );
    return {
      client,
      broker: served.broker,
      stop: async () => {
        await client.close();
        await served.close();
      },
    };
  },
});

describe("/mcp auth and methods", () => {
  it("needs the token like every other route, and takes POST only", async () => {
    const served = await serveInProcess();
    try {
      const anonymous = new Client({ name: "anonymous", version: "1.0.0" });
      await assert.rejects(
        anonymous.connect(new StreamableHTTPClientTransport(new URL(`${served.url}/mcp`))),
        /unauthenticated/,
      );
      const get = await fetch(`${served.url}/mcp`, { headers: { Authorization: `Bearer ${TOKEN}` } });
      assert.equal(get.status, 405);
      assert.equal(get.headers.get("allow"), "POST");
      await get.text();
    } finally {
      await served.close();
    }
  });
});
