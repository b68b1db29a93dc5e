import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";
import { Command } from "commander";
import { FlagError, goFlags } from "../../src/cli/argv.js";
import { parseGoInt } from "../../src/cli/options.js";
import { goJson, goQuote, goSeconds, padRight, rfc3339Nano } from "../../src/cli/output/go.js";
import { renewPace } from "../../src/cli/renewer.js";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { tempDir } from "../support/temp.js";
import { compiledCli } from "./compiled.js";
import { cleanEnv } from "./harness.js";

describe("the original's Go syntax and formatting", () => {
  const receive = new Command("receive")
    .option("--max <n>")
    .option("--no-ack")
    .option("--delete")
    .option("-o, --output <format>");

  it("flags: one dash or two, -flag=value, booleans =true/=false, a value flag takes the next word", () => {
    assert.deepEqual(goFlags(["q", "-max", "5", "-no-ack"], receive.options), ["q", "--max=5", "--no-ack"]);
    assert.deepEqual(goFlags(["-max=-1", "q", "--delete=true"], receive.options), [
      "--max=-1",
      "q",
      "--delete",
    ]);
    assert.deepEqual(goFlags(["q", "--max", "-3", "--delete=F"], receive.options), ["q", "--max=-3"]);
    assert.deepEqual(goFlags(["q", "-o", "json", "-", "--", "-max"], receive.options), [
      "q",
      "-o",
      "json",
      "-",
      "--",
      "-max",
    ]);
    assert.deepEqual(goFlags(["-help"], receive.options), ["--help"]);
    const refused: [string[], string][] = [
      [["-bogus"], "flag provided but not defined: -bogus"],
      [["q", "-1"], "flag provided but not defined: -1"],
      [["--max"], "flag needs an argument: -max"],
      [["--delete=yes"], 'invalid boolean value "yes" for -delete: parse error'],
      [["---x"], "bad flag syntax: ---x"],
      [["-=x"], "bad flag syntax: -=x"],
    ];
    for (const [args, message] of refused)
      assert.throws(() => goFlags(args, receive.options), new FlagError(message), args.join(" "));
  });

  it("integers as Go's flag package reads them", () => {
    const cases: [string, number | undefined][] = [
      ["0", 0],
      ["-7", -7],
      ["+3", 3],
      ["0x1f", 31],
      ["0o17", 15],
      ["017", 15],
      ["0b101", 5],
      ["1_000", 1000],
      ["0x_1f", 31],
      ["_1", undefined],
      ["1__0", undefined],
      ["08", undefined],
      ["1.5", undefined],
      ["", undefined],
    ];
    for (const [text, n] of cases) assert.equal(parseGoInt(text), n, text);
  });

  it("%q: printable text as is, Go's escapes for the rest, invalid UTF-8 byte by byte", () => {
    assert.equal(goQuote("plain é 😀"), '"plain é 😀"');
    assert.equal(goQuote('"\\'), '"\\"\\\\"');
    assert.equal(goQuote("\u0007\b\f\n\r\t\v"), '"\\a\\b\\f\\n\\r\\t\\v"');
    assert.equal(goQuote("\u0000\u001b\u007f"), '"\\x00\\x1b\\x7f"');
    assert.equal(goQuote("\u00a0\u200b\u2028\ufeff"), '"\\u00a0\\u200b\\u2028\\ufeff"');
    assert.equal(goQuote("\u{e0001}"), '"\\U000e0001"');
    assert.equal(goQuote(Buffer.from([0xff, 0x61, 0xc3, 0xed, 0xa0, 0x80])), '"\\xffa\\xc3\\xed\\xa0\\x80"');
  });

  it("JSON with Go's escaping; padding by code points; RFC 3339 and durations as Go prints them", () => {
    assert.equal(goJson({ a: "<&>\u2028\u2029" }), '{\n  "a": "\\u003c\\u0026\\u003e\\u2028\\u2029"\n}\n');
    assert.equal(goJson({ s: "\ud800" }), '{\n  "s": "\\ufffd"\n}\n');
    assert.equal(goJson([]), "[]\n");
    assert.equal(padRight("é", 3), "é  ");
    assert.equal(padRight("toolong", 3), "toolong");
    assert.equal(rfc3339Nano(Date.parse("2030-01-02T03:04:05.500Z")), "2030-01-02T03:04:05.5Z");
    assert.equal(rfc3339Nano(Date.parse("2030-01-02T03:04:00.000Z")), "2030-01-02T03:04:00Z");
    assert.equal(rfc3339Nano(Date.parse("2030-01-02T03:04:05.120Z")), "2030-01-02T03:04:05.12Z");
    assert.deepEqual([0, 45, 300, 3723].map(goSeconds), ["0s", "45s", "5m0s", "1h2m3s"]);
  });

  it("the renewal pace: a third of what is left, at least 50 ms, never past half; 1 s when unknown", () => {
    assert.equal(renewPace(0, 1000), 1000);
    assert.equal(renewPace(1000 + 30_000, 1000), 10_000);
    assert.equal(renewPace(1000 + 120, 1000), 50);
    assert.equal(renewPace(1000 + 80, 1000), 40);
    assert.equal(renewPace(1000, 1000), 0);
    assert.equal(renewPace(500, 1000), 0);
  });
});

describe("receive keeps the leases alive while it prints", () => {
  it("a reader slower than the lease: the lock is renewed, and the batch completes once printed", async () => {
    const tmp = tempDir("mqlite-cli-renew-");
    const file = tmp.file("mq.db");
    const broker = await openBroker(file, { logger: silentLogger, background: false });
    let child: ReturnType<typeof spawn> | undefined;
    try {
      await broker.createQueue("slow", { lockDurationMs: 1000 });
      // Bodies far larger than a pipe's buffer: the write blocks until this test reads.
      const body = Buffer.alloc(600 * 1024, 97);
      await broker.send("slow", [{ body }, { body }]);
      child = spawn(process.execPath, [compiledCli(), "receive", "slow", "-max", "2"], {
        env: { ...cleanEnv(), MQLITE_DB: file },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      child.stderr!.setEncoding("utf8").on("data", (d: string) => {
        stderr += d;
      });
      const exited = new Promise<number | null>((resolve) => child!.on("close", resolve));
      const locked = async () =>
        (await broker.peek("slow", { state: "locked" })).map((m) => m.lockedUntil ?? 0);
      let first: number[] = [];
      for (let i = 0; i < 200 && first.length < 2; i++) {
        first = await locked();
        if (first.length < 2) await new Promise((r) => setTimeout(r, 25));
      }
      assert.equal(first.length, 2, "both messages are taken");
      await new Promise((r) => setTimeout(r, 2500));
      const later = await locked();
      assert.equal(
        later.length,
        2,
        `still locked after 2.5 s with a 1 s lease; stderr: ${stderr}; ${JSON.stringify(await broker.stats("slow"))}`,
      );
      assert.ok(Math.min(...later) > Math.max(...first), `renewed: ${later} after ${first}`);
      let out = 0;
      child.stdout!.on("data", (d: Buffer) => {
        out += d.length;
      });
      assert.equal(await exited, 0, stderr);
      assert.ok(out > 2 * body.length, "both bodies were printed");
      assert.equal((await broker.stats("slow")).total, 0, "completed after printing");
    } finally {
      child?.kill("SIGKILL");
      await broker.close();
      tmp.cleanup();
    }
  });
});
