import assert from "node:assert/strict";
import { existsSync, mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Broker } from "../../src/contract/broker.js";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
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

  it("flag errors exit 2 with Go's wording, as do no command and an unknown one; nothing reaches the broker", async () => {
    const cases: [string[], RegExp][] = [
      [["list", "--bogus"], /^flag provided but not defined: -bogus\n/],
      [["list", "-bogus=1"], /^flag provided but not defined: -bogus\n/],
      [["cancel", "q", "-1"], /^flag provided but not defined: -1\n/],
      [["receive", "q", "--max"], /^flag needs an argument: -max\n/],
      [["receive", "q", "--delete=maybe"], /^invalid boolean value "maybe" for -delete: parse error\n/],
      [["list", "---x"], /^bad flag syntax: ---x\n/],
      [["receive", "q", "--wait", "5x"], /option '--wait <duration>' argument '5x' is invalid/],
      [["receive", "q", "-max", "many"], /option '--max <n>' argument 'many' is invalid\. parse error/],
      [["create-queue", "q2", "--lock", "-1s"], /a duration must not be negative/],
    ];
    const results = await Promise.all(cases.map(([args]) => run(args)));
    results.forEach((r, i) => {
      const [args, stderr] = cases[i]!;
      assert.equal(r.code, 2, `mqlite ${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, stderr, `mqlite ${args.join(" ")}`);
      assert.equal(r.stdout, "");
    });
    const [none, unknown] = await Promise.all([run([]), run(["bogus"])]);
    assert.equal(none.code, 2);
    assert.match(none.stdout, /^Usage: mqlite /, "the usage goes to stdout");
    assert.equal(none.stderr, "");
    assert.equal(unknown.code, 2);
    assert.equal(unknown.stderr, "unknown command: bogus\n");
    assert.match(unknown.stdout, /^Usage: mqlite /);
    assert.equal((await broker.stats("q")).total, 0);
    for (const flag of ["-v", "--version", "version"]) {
      const r = await run([flag]);
      assert.equal(r.code, 0, flag);
      assert.match(r.stdout, /^mqlite \d+\.\d+\.\d+\S*\n$/, flag);
    }
  });

  it("usage errors exit 1 with the original's texts, and nothing reaches the broker", async () => {
    const cases: [string[], RegExp][] = [
      [["send"], /^error: invalid_argument: usage: send <queue> <body\|-> \[--file f /],
      [["send", "q"], /^error: invalid_argument: no body given \(provide a body argument, --file, or '-'\)/],
      [["send", "q", "x", "--file", "f"], /give the body either as an argument or with --file, not both/],
      [["cancel", "q", "1", "2"], /^error: invalid_argument: usage: cancel <queue> <seq>\n$/],
      [["complete", "q", "1"], /^error: invalid_argument: usage: <verb> <queue> <seq> <lock-token>\n$/],
      [["status", "x"], /^error: invalid_argument: usage: status {2}\(takes no arguments\)\n$/],
      [["cancel", "q", "abc"], /invalid seq "abc": strconv\.ParseInt: parsing "abc": invalid syntax/],
      [["cancel", "q", "0"], /invalid seq 0: sequence numbers are positive/],
      [["list", "--output", "yaml"], /^error: invalid_argument: invalid --output "yaml": want text or json/],
      [
        ["schedule", "q", "x", "--at", "2001-01-01T00:00:00Z"],
        /--at must be in the future \(got 2001-01-01T00:00:00Z\)/,
      ],
      [
        ["schedule", "q", "x", "--at", "soon"],
        /invalid --at "soon": want RFC3339 \(2026-01-02T15:04:05Z\) or a duration \(30m\)/,
      ],
      [["schedule", "q", "x"], /usage: schedule <queue> <body\|-> --at/],
      [["receive-deferred", "q"], /usage: receive-deferred <queue> --seq 42,57/],
      [["receive-deferred", "q", "--seq", " , "], /--seq listed no numbers/],
      [["receive-deferred", "q", "--seq", "1,x"], /invalid seq "x"/],
      [["test-filter", "true", "--prop", "a"], /invalid --prop "a": want k=v/],
      [
        ["purge-dlq", "q"],
        /refusing to purge the entire DLQ without a bound — pass --max\/--older-than, or --all/,
      ],
      [
        ["purge-dlq", "q", "--all", "--max", "0"],
        /--all deletes the entire DLQ and cannot be combined with --max\/--older-than/,
      ],
      [["purge-dlq", "q", "--max", "-1"], /--max and --older-than must be >= 0/],
      [["redrive", "q", "--older-than", "10us"], /--older-than must be at least 1ms \(got 10µs\)/],
      [
        ["vacuum", "--endpoint", "http://127.0.0.1:6754"],
        /vacuum is a local maintenance command: drop --endpoint\/MQLITE_ENDPOINT/,
      ],
      [["list", "--endpoint", "http://127.0.0.1:6754", "--db", file], /--endpoint and --db name two brokers/],
      [
        ["list", "--endpoint", "ftp://host"],
        /unsupported scheme "ftp" \(use mqlite:\/\/, mqlites:\/\/, http:\/\/, https:\/\/\)/,
      ],
      [["list", "--endpoint", "mqlite://"], /missing host in connection string/],
      [["send", "q", "-", "--ndjson", "--group", "g"], /--ndjson lines carry their own fields/],
      [["receive", "q", "--delete", "--no-ack"], /--delete and --no-ack are mutually exclusive/],
    ];
    const results = await Promise.all(cases.map(([args]) => run(args)));
    results.forEach((r, i) => {
      const [args, stderr] = cases[i]!;
      assert.equal(r.code, 1, `mqlite ${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, stderr, `mqlite ${args.join(" ")}`);
    });
    assert.equal((await broker.stats("q")).total, 0);
    assert.deepEqual(
      (await broker.listQueues()).map((q) => q.name),
      ["q"],
    );
  });

  it("nothing named: ./mq.db in the working directory, as the original", async () => {
    const dir = tmp.file("cwd");
    mkdirSync(dir);
    const created = await cli(["create-queue", "here"], { cwd: dir });
    assert.equal(created.code, 0, created.stderr);
    assert.ok(existsSync(join(dir, "mq.db")));
    const listed = await cli(["list", "-output", "json"], { cwd: dir });
    assert.deepEqual(
      JSON.parse(listed.stdout).map((q: { name: string }) => q.name),
      ["here"],
    );
    // `--endpoint=` forces a local database even when MQLITE_ENDPOINT names a broker.
    const forced = await cli(["list", "--endpoint="], {
      cwd: dir,
      env: { MQLITE_ENDPOINT: "http://127.0.0.1:1" },
    });
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(forced.stdout, /^here {20} kind=queue/);
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
    expectFailure(bad, 1, /^error: invalid_argument: line 2: json: unknown field "bodyx"/);
    expectFailure(
      big,
      1,
      /^error: invalid_argument: stdin body exceeds the 16 MiB CLI limit; use --file for larger messages/,
    );
    assert.equal((await broker.stats("q")).total, 0, "a bad line fails its whole batch");
  });

  it("a bulk send draws no progress when stderr is not a terminal", async () => {
    const r = await run(["send", "q", "-", "--lines"], { input: "a\nb\n" });
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^ok: queue=q seq=\d+\nok: queue=q seq=\d+\n$/);
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
