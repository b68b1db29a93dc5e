import assert from "node:assert/strict";
import { createServer } from "node:net";
import { after, before, describe, it } from "node:test";
import type { Broker } from "../../src/contract/broker.js";
import { silentLogger } from "../../src/engine/logger.js";
import { openBroker } from "../../src/engine/open.js";
import { tempDir } from "../support/temp.js";
import { type CliOptions, type CliResult, cli } from "./harness.js";

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function expectFailure(r: CliResult, code: number, stderr: RegExp): void {
  assert.equal(r.code, code, `exit status; stderr: ${r.stderr}`);
  assert.match(r.stderr, stderr);
  assert.equal(r.stdout, "", "nothing on stdout");
}

describe("mqlite failures: a line `error: <code>: <message>` and a non-zero exit", () => {
  const tmp = tempDir("mqlite-cli-fail-");
  const file = tmp.file("mq.db");
  const env = { MQLITE_DB: file };
  let broker: Broker;
  const run = (args: string[], o: CliOptions = {}) => cli(args, { ...o, env: { ...env, ...o.env } });

  before(async () => {
    broker = await openBroker(file, { logger: silentLogger });
    await broker.createQueue("q");
  });
  after(async () => {
    await broker.close();
    tmp.cleanup();
  });

  it("a broker error keeps its wire code (exit 1)", async () => {
    const [unknown, lost, cancel] = await Promise.all([
      run(["send", "nope", "x"]),
      run(["complete", "q", "1", "0123456789abcdef0123456789abcdef"]),
      run(["cancel", "q", "99"]),
    ]);
    assert.equal(unknown.code, 1);
    assert.equal(unknown.stderr, "error: not_found: mqlite: queue not found\n");
    expectFailure(lost, 1, /^error: lock_lost: /);
    expectFailure(cancel, 1, /^error: not_found: /);
  });

  it("usage errors are invalid_argument with exit 2, and nothing reaches the broker", async () => {
    const cases: [string[], RegExp][] = [
      [["list", "--bogus"], /^error: invalid_argument: unknown option '--bogus'/],
      [["bogus"], /^error: invalid_argument: unknown command 'bogus'/],
      [["send"], /^error: invalid_argument: missing required argument 'queue'/],
      [["send", "q"], /^error: invalid_argument: missing the body/],
      [["cancel", "q", "1", "2"], /^error: invalid_argument: too many arguments for 'cancel'/],
      [["complete", "q", "1"], /^error: invalid_argument: missing required argument 'lock-token'/],
      [["cancel", "q", "abc"], /value 'abc' is invalid for argument 'seq'\. not a whole number/],
      [
        ["receive", "q", "--wait", "5x"],
        /option '--wait <duration>' argument '5x' is invalid\. invalid duration "5x"/,
      ],
      [["create-queue", "q2", "--lock", "-1s"], /a duration must not be negative/],
      [["peek", "q", "--max", "0"], /must be at least 1/],
      [["peek", "q", "--state", "gone"], /Allowed choices are active, locked/],
      [["schedule", "q", "x", "--at", "2001-01-01T00:00:00Z"], /must be in the future/],
      [["schedule", "q", "x"], /required option '--at <time>' not specified/],
      [["receive-deferred", "q", "--seq", "1,,2"], /give sequence numbers such as 42,57/],
      [["purge-dlq", "q"], /purge-dlq needs --max, --older-than, or --all/],
      [["purge-dlq", "q", "--all", "--max", "3"], /--all purges every dead letter/],
      [["purge-dlq", "q", "--older-than", "0"], /--older-than must be at least 1ms/],
      [["vacuum", "--endpoint", "http://127.0.0.1:6754"], /vacuum works on a local database file/],
      [["list", "--endpoint", "http://127.0.0.1:6754", "--db", file], /--endpoint and --db name two brokers/],
      [["list", "--endpoint", "ftp://host"], /the scheme must be http, https, mqlite or mqlites/],
      [["send", "q", "-", "--ndjson", "--group", "g"], /--ndjson lines carry their own fields/],
      [["receive", "q", "--delete", "--no-ack"], /--delete and --no-ack exclude each other/],
    ];
    const results = await Promise.all(cases.map(([args]) => run(args)));
    results.forEach((r, i) => {
      const [args, stderr] = cases[i]!;
      assert.equal(r.code, 2, `mqlite ${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, stderr, `mqlite ${args.join(" ")}`);
    });
    assert.equal((await broker.stats("q")).total, 0);
    assert.deepEqual(
      (await broker.listQueues()).map((q) => q.name),
      ["q"],
    );
  });

  it("no broker named: the error says how to name one", async () => {
    const r = await cli(["list"]);
    expectFailure(r, 2, /^error: invalid_argument: no broker named: set MQLITE_ENDPOINT \(or --endpoint\)/);
  });

  it("a broker out of reach is unavailable", async () => {
    const r = await cli(["list", "--endpoint", `http://127.0.0.1:${await closedPort()}`]);
    expectFailure(r, 1, /^error: unavailable: cannot reach the broker: ECONNREFUSED/);
  });

  it("bulk input: a bad NDJSON line names its line, and an oversized body is refused", async () => {
    const good = JSON.stringify({ body: Buffer.from("ok").toString("base64") });
    const [bad, big] = await Promise.all([
      run(["send", "q", "-", "--ndjson"], { input: `${good}\n{"bodyx":1}\n` }),
      run(["send", "q", "-"], { input: Buffer.alloc(16 * 1024 * 1024 + 1, 97) }),
    ]);
    expectFailure(bad, 2, /^error: invalid_argument: line 2: json: unknown field "bodyx"/);
    expectFailure(big, 2, /^error: invalid_argument: stdin is over 16777216 bytes/);
    assert.equal((await broker.stats("q")).total, 0, "a bad line fails its whole batch");
  });

  it("a bulk send draws no progress when stderr is not a terminal", async () => {
    const r = await run(["send", "q", "-", "--lines"], { input: "a\nb\n" });
    assert.equal(r.code, 0);
    assert.equal(r.stdout, "sent 2 messages\n");
    assert.equal(r.stderr, "");
    await broker.purge("q");
    await broker.createQueue("q");
    const [a, b] = await broker.receive("q", { maxMessages: 2 });
    await broker.completeBatch(
      "q",
      [a!, b!].map((m) => ({ seqNumber: m.seqNumber, lockToken: m.lockToken! })),
    );
  });

  it("receive refuses up front when stdout is closed, and gives messages back when printing fails", async () => {
    const [seq] = await broker.send("q", { body: "keep me" });
    const closed = await run(["receive", "q"], { stdout: "closed" });
    assert.equal(closed.code, 1);
    assert.match(
      closed.stderr,
      /^error: stdout_failed: stdout is closed or \/dev\/null: the messages would be lost, so nothing was received/,
    );
    let [m] = await broker.peek("q");
    assert.deepEqual([m?.seqNumber, m?.state, m?.deliveryCount], [seq, "active", 0], "never taken");

    const full = await run(["receive", "q"], { stdout: "full" });
    assert.equal(full.code, 1);
    assert.match(
      full.stderr,
      /^error: stdout_failed: stdout failed \(ENOSPC\) with 1 message\(s\) received: they were given back/,
    );
    [m] = await broker.peek("q");
    assert.deepEqual([m?.state, m?.deliveryCount], ["active", 0], "not completed, delivery given back");
  });
});
