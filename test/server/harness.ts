import { silentLogger } from "../../src/contract/logger.js";
import { ManualClock } from "../../src/core/clock.js";
import { type RunningServer, type ServerOptions, startServer } from "../../src/server/index.js";
import { SqliteBroker, type SqliteBrokerOptions } from "../../src/store/sqlite/sqlite-broker.js";

/** A served in-memory broker on a free loopback port, spoken to with plain `fetch`. */
export interface Served {
  url: string;
  broker: SqliteBroker;
  clock: ManualClock;
  server: RunningServer;
  /** POSTs raw text (or a JSON value) to `path` with the test token; answers status, headers and text. */
  post(path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer>;
  /** POSTs to `/mqlite.v1.<rpc>` and parses the JSON answer. */
  rpc(rpc: string, body?: unknown): Promise<{ status: number; json: any; text: string }>;
  close(): Promise<void>;
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

export const TOKEN = "test-token";
export const AUTH = { authorization: `Bearer ${TOKEN}` };

export async function serve(
  options: Partial<ServerOptions> = {},
  engine: SqliteBrokerOptions & { path?: string } = {},
): Promise<Served> {
  const clock = new ManualClock();
  const broker = new SqliteBroker(engine.path ?? ":memory:", {
    clock,
    background: false,
    logger: silentLogger,
    ...engine,
  });
  const server = await startServer({ broker, port: 0, tokens: [TOKEN], logger: silentLogger, ...options });
  const post = async (path: string, body: unknown = "{}", headers: Record<string, string> = AUTH) => {
    const res = await fetch(server.url + path, {
      method: "POST",
      headers,
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  };
  return {
    url: server.url,
    broker,
    clock,
    server,
    post,
    async rpc(rpc, body = {}) {
      const a = await post(`/mqlite.v1.${rpc}`, body);
      return { status: a.status, text: a.text, json: JSON.parse(a.text) };
    },
    close: () => server.close(),
  };
}

/** Base64 of a UTF-8 string. */
export const b64 = (s: string) => Buffer.from(s).toString("base64");
