import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { describe, it } from "node:test";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { tempDir } from "../support/temp.js";

/** The node flags this test runs under (tsx, loaders), without the test runner's own. */
const nodeArgs = process.execArgv.filter((a) => !a.startsWith("--test"));

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

function run(args: string[], env: Record<string, string>): Run {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("MQLITE_")));
  const child = spawn(process.execPath, [...nodeArgs, "src/cli/main.ts", ...args], {
    env: { ...clean, MQLITE_LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (d) => {
    out += d;
  });
  child.stderr!.on("data", (d) => {
    err += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

async function waitFor(pattern: RegExp, read: () => string, ms = 20_000): Promise<RegExpMatchArray> {
  const deadline = Date.now() + ms;
  for (;;) {
    const m = read().match(pattern);
    if (m) return m;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}; got: ${read()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("mqlite serve (child process)", () => {
  it("starts from the environment, prints its generated token, answers, and stops on SIGTERM", async () => {
    const tmp = tempDir();
    const r = run(["serve"], { MQLITE_DB: `file:${tmp.file("mq.db")}`, MQLITE_ADDR: "127.0.0.1:0" });
    try {
      const [, url] = await waitFor(/at (http:\/\/127\.0\.0\.1:\d+)/, r.stdout);
      const [, token] = await waitFor(/token: (mqk_[0-9a-f]{32}) \(generated/, r.stdout);
      assert.match(r.stdout(), /console: http:\/\/127\.0\.0\.1:\d+\/ui\//);
      assert.equal(await (await fetch(`${url}/healthz`)).text(), "ok");
      const post = (path: string, body: unknown, auth = true) =>
        fetch(`${url}${path}`, {
          method: "POST",
          headers: auth ? { authorization: `Bearer ${token}` } : {},
          body: JSON.stringify(body),
        });
      assert.equal((await post("/mqlite.v1.AdminService/CreateQueue", { name: "q" }, false)).status, 401);
      assert.equal((await post("/mqlite.v1.AdminService/CreateQueue", { name: "q" })).status, 200);
      const sent = await post("/mqlite.v1.QueueService/Send", { queue: "q", messages: [{ body: "aGk=" }] });
      const { seq_numbers } = (await sent.json()) as { seq_numbers: number[] };
      const index = await fetch(`${url}/ui/`);
      assert.equal(index.status, 200);
      assert.match(await index.text(), /<title>mqlite<\/title>/);
      r.child.kill("SIGTERM");
      assert.equal(await r.exited, 0);
      const reopened = await openBroker(tmp.file("mq.db"), { background: false, logger: silentLogger });
      try {
        assert.deepEqual(
          (await reopened.peek("q")).map((m) => m.seqNumber),
          seq_numbers,
        );
      } finally {
        await reopened.close();
      }
    } finally {
      r.child.kill("SIGKILL");
      tmp.cleanup();
    }
  });

  it("takes tokens from MQLITE_TOKENS, and MQLITE_UI=off drops the console", async () => {
    const r = run(["serve", "--addr", "127.0.0.1:0"], {
      MQLITE_DB: ":memory:",
      MQLITE_TOKENS: "one, two",
      MQLITE_UI: "off",
      MQLITE_ADDR: "bogus",
    });
    try {
      const [, url] = await waitFor(/at (http:\/\/127\.0\.0\.1:\d+)/, r.stdout);
      assert.match(r.stdout(), /auth: 2 token\(s\)/);
      assert.doesNotMatch(r.stdout(), /mqk_/);
      const card = (await (await fetch(`${url}/`)).json()) as Record<string, unknown>;
      assert.equal(card.auth, "bearer");
      assert.equal("ui" in card, false);
      const res = await fetch(`${url}/metrics`, { headers: { authorization: "Bearer two" } });
      assert.equal(res.status, 200);
      await res.text();
      r.child.kill("SIGINT");
      assert.equal(await r.exited, 0);
    } finally {
      r.child.kill("SIGKILL");
    }
  });

  it("enforces scoped MQLITE_TOKENS and writes the audit log to stdout", async () => {
    const r = run(["serve", "--addr", "127.0.0.1:0"], {
      MQLITE_DB: ":memory:",
      MQLITE_TOKENS: "admin:adm-secret,scraper:mon-secret=monitor",
      MQLITE_UI: "off",
      MQLITE_LOG_LEVEL: "info",
    });
    try {
      const [, url] = await waitFor(/at (http:\/\/127\.0\.0\.1:\d+)/, r.stdout);
      const create = (token: string, name: string) =>
        fetch(`${url}/mqlite.v1.AdminService/CreateQueue`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}` },
          body: JSON.stringify({ name }),
        });
      const refused = await create("mon-secret", "q1");
      assert.equal(refused.status, 403);
      assert.equal(((await refused.json()) as { code: string }).code, "permission_denied");
      assert.equal((await create("adm-secret", "q2")).status, 200);
      await waitFor(/"audit":"createQueue".*"q2"/, r.stdout);
      const audit = r
        .stdout()
        .split("\n")
        .filter((l) => l.includes('"msg":"audit"'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      assert.deepEqual(
        audit.map((l) => [l.level, l.token_id, l.target, l.result]),
        [
          [40, "scraper", { queue: "q1" }, "permission_denied"],
          [30, "admin", { queue: "q2" }, "ok"],
        ],
      );
      assert.doesNotMatch(r.stdout(), /adm-secret|mon-secret/);
      r.child.kill("SIGTERM");
      assert.equal(await r.exited, 0);
    } finally {
      r.child.kill("SIGKILL");
    }
  });

  it("MQLITE_ADDR=:port listens on every interface; a bad setting warns and the default applies", async () => {
    const r = run(["serve"], {
      MQLITE_DB: ":memory:",
      MQLITE_ADDR: ":0",
      MQLITE_TOKENS: "t",
      MQLITE_DLQ_MAX_COUNT: "lots",
    });
    try {
      const [, host, port] = await waitFor(/ at http:\/\/(\[::\]|0\.0\.0\.0):(\d+)/, r.stdout);
      assert.ok(host);
      assert.equal(await (await fetch(`http://127.0.0.1:${port}/healthz`)).text(), "ok");
      assert.match(r.stderr(), /^warning: ignoring unparseable MQLITE_DLQ_MAX_COUNT="lots"; using default$/m);
      r.child.kill("SIGTERM");
      assert.equal(await r.exited, 0);
    } finally {
      r.child.kill("SIGKILL");
    }
  });

  for (const [what, args, env, message] of [
    ["a bad MQLITE_SYNC", ["serve"], { MQLITE_SYNC: "turbo" }, /unknown MQLITE_SYNC "turbo"/],
    ["a blank MQLITE_ADDR", ["serve"], { MQLITE_ADDR: "" }, /MQLITE_ADDR is blank/],
    ["a blank --addr", ["serve", "--addr", " "], {}, /--addr is blank/],
    [
      "a non-loopback address without auth",
      ["serve", "--addr", "0.0.0.0:0"],
      { MQLITE_TOKENS: "off" },
      /refusing to serve 0\.0\.0\.0 without auth/,
    ],
    ["MQLITE_TOKENS without a usable token", ["serve"], { MQLITE_TOKENS: " , " }, /no usable token/],
    ["an unknown scope in MQLITE_TOKENS", ["serve"], { MQLITE_TOKENS: "t=admin" }, /unknown scope "admin"/],
  ] as const) {
    it(`fails startup on ${what} with a clear message and a non-zero exit`, async () => {
      const r = run([...args], { MQLITE_DB: ":memory:", ...env });
      const code = await r.exited;
      assert.notEqual(code, 0);
      assert.match(r.stderr(), message);
      assert.match(r.stderr(), /^mqlite: /m);
      assert.equal(r.stdout(), "", "nothing served");
    });
  }
});
