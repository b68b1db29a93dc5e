import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseGoDuration } from "../../src/cli/duration.js";
import { CliError } from "../../src/cli/errors.js";
import { isLoopback, parseAddr } from "../../src/cli/serve/addr.js";
import { serveConfig } from "../../src/cli/serve/config.js";
import { parseTokens } from "../../src/cli/serve/tokens.js";

describe("serve configuration", () => {
  it("defaults: loopback 6754, ./mq.db, a generated token, NORMAL, DLQ bounds 14 d / 1M / off, console on", () => {
    const c = serveConfig({}, {});
    assert.deepEqual(c.addr, { host: "127.0.0.1", port: 6754 });
    assert.equal(c.db, "./mq.db");
    assert.equal(c.auth.mode, "generated");
    assert.match(c.auth.tokens[0]!, /^mqk_[0-9a-f]{32}$/);
    assert.equal(c.synchronous, "normal");
    assert.deepEqual(c.dlqRetention, { maxAgeMs: 14 * 24 * 3600 * 1000, maxCount: 1_000_000, maxBytes: 0 });
    assert.equal(c.ui, true);
    assert.equal(c.cors, undefined);
    assert.equal(c.maxMessageBytes, undefined);
  });

  it("--addr wins over MQLITE_ADDR; a blank value of either is an error", () => {
    assert.deepEqual(serveConfig({ addr: "127.0.0.2:1" }, { MQLITE_ADDR: "127.0.0.3:2" }).addr, {
      host: "127.0.0.2",
      port: 1,
    });
    assert.deepEqual(serveConfig({}, { MQLITE_ADDR: "localhost:7000" }).addr, {
      host: "localhost",
      port: 7000,
    });
    assert.throws(() => serveConfig({}, { MQLITE_ADDR: "" }), /MQLITE_ADDR is blank/);
    assert.throws(() => serveConfig({}, { MQLITE_ADDR: "  " }), CliError);
    assert.throws(() => serveConfig({ addr: "" }, {}), /--addr is blank/);
  });

  it("MQLITE_ADDR=:6754 is every interface, as in the original (the default stays loopback)", () => {
    assert.deepEqual(serveConfig({}, { MQLITE_ADDR: ":6754" }).addr, { host: "", port: 6754 });
    assert.deepEqual(serveConfig({ addr: ":7000" }, {}).addr, { host: "", port: 7000 });
    assert.deepEqual(serveConfig({}, {}).addr, { host: "127.0.0.1", port: 6754 });
    assert.throws(() => serveConfig({}, { MQLITE_ADDR: ":6754", MQLITE_TOKENS: "off" }), /every interface/);
  });

  it("a non-loopback address needs a token or --insecure-allow-remote", () => {
    assert.throws(() => serveConfig({ addr: "0.0.0.0:6754" }, { MQLITE_TOKENS: "off" }), /without auth/);
    assert.throws(() => serveConfig({ addr: ":6754" }, { MQLITE_TOKENS: "off" }), /every interface/);
    assert.equal(serveConfig({ addr: "0.0.0.0:6754" }, {}).auth.mode, "generated");
    assert.equal(serveConfig({ addr: "0.0.0.0:6754" }, { MQLITE_TOKENS: "t" }).auth.mode, "configured");
    assert.equal(
      serveConfig({ addr: "0.0.0.0:6754", insecureAllowRemote: true }, { MQLITE_TOKENS: "off" }).auth.mode,
      "off",
    );
    assert.equal(serveConfig({ addr: "[::1]:6754" }, { MQLITE_TOKENS: "OFF" }).auth.mode, "off");
  });

  it("MQLITE_SYNC takes the four modes in any case, and nothing else", () => {
    assert.equal(serveConfig({}, { MQLITE_SYNC: "FULL" }).synchronous, "full");
    assert.equal(serveConfig({}, { MQLITE_SYNC: "extra" }).synchronous, "extra");
    assert.throws(() => serveConfig({}, { MQLITE_SYNC: "fast" }), /unknown MQLITE_SYNC "fast"/);
  });

  it("MQLITE_DLQ_*: durations, counts, and off", () => {
    const c = serveConfig(
      {},
      { MQLITE_DLQ_MAX_AGE: "1h30m", MQLITE_DLQ_MAX_COUNT: "5", MQLITE_DLQ_MAX_BYTES: "1024" },
    );
    assert.deepEqual(c.dlqRetention, { maxAgeMs: 5_400_000, maxCount: 5, maxBytes: 1024 });
    assert.deepEqual(
      serveConfig({}, { MQLITE_DLQ_RETENTION: "off", MQLITE_DLQ_MAX_COUNT: "5" }).dlqRetention,
      {
        maxAgeMs: 0,
        maxCount: 0,
        maxBytes: 0,
      },
    );
    // 0 or less turns a bound off, as in the original.
    assert.deepEqual(
      serveConfig({}, { MQLITE_DLQ_MAX_AGE: "-1h", MQLITE_DLQ_MAX_COUNT: "-1", MQLITE_DLQ_MAX_BYTES: "0" })
        .dlqRetention,
      { maxAgeMs: 0, maxCount: 0, maxBytes: 0 },
    );
  });

  it("a value that does not parse is ignored with the original's warning, and the default applies", () => {
    const c = serveConfig(
      {},
      {
        MQLITE_DLQ_MAX_AGE: "14 days",
        MQLITE_DLQ_MAX_COUNT: "lots",
        MQLITE_DLQ_MAX_BYTES: "1.5",
        MQLITE_MAX_MESSAGE_BYTES: "0",
        MQLITE_LOG_LEVEL: "chatty",
        MQLITE_MAX_LONG_POLLS: "-3",
        MQLITE_MAX_LARGE_BODY_BYTES: "64MiB",
        MQLITE_LARGE_BODY_MIN_RATE: "-1",
      },
    );
    assert.deepEqual(c.dlqRetention, { maxAgeMs: 14 * 24 * 3600 * 1000, maxCount: 1_000_000, maxBytes: 0 });
    assert.equal(c.maxMessageBytes, undefined);
    assert.equal(c.logLevel, "info");
    assert.equal(c.maxLongPolls, undefined);
    assert.equal(c.maxLargeBodyBytes, undefined);
    assert.equal(c.largeBodyMinBytesPerSecond, undefined);
    assert.deepEqual(c.warnings, [
      'warning: ignoring unparseable MQLITE_MAX_LONG_POLLS="-3"; using default',
      'warning: ignoring unparseable MQLITE_MAX_LARGE_BODY_BYTES="64MiB"; using default',
      'warning: ignoring unparseable MQLITE_LARGE_BODY_MIN_RATE="-1"; using default',
      'warning: ignoring unparseable MQLITE_MAX_MESSAGE_BYTES="0"; using default',
      'warning: ignoring unparseable MQLITE_DLQ_MAX_AGE="14 days"; using default',
      'warning: ignoring unparseable MQLITE_DLQ_MAX_COUNT="lots"; using default',
      'warning: ignoring unparseable MQLITE_DLQ_MAX_BYTES="1.5"; using default',
      'warning: ignoring unparseable MQLITE_LOG_LEVEL="chatty"; using default',
    ]);
    assert.deepEqual(serveConfig({}, { MQLITE_MAX_MESSAGE_BYTES: "+2048" }).warnings, []);
    assert.equal(serveConfig({}, { MQLITE_MAX_MESSAGE_BYTES: "+2048" }).maxMessageBytes, 2048);
    assert.equal(
      serveConfig({}, { MQLITE_MAX_LARGE_BODY_BYTES: "100000000" }).maxLargeBodyBytes,
      100_000_000,
    );
    assert.equal(serveConfig({}, { MQLITE_LARGE_BODY_MIN_RATE: "0" }).largeBodyMinBytesPerSecond, 0);
    assert.equal(serveConfig({}, {}).largeBodyMinBytesPerSecond, undefined);
  });

  it("MQLITE_UI, MQLITE_CORS, MQLITE_MAX_MESSAGE_BYTES, MQLITE_DB", () => {
    for (const off of ["off", "FALSE", "0", "no"])
      assert.equal(serveConfig({}, { MQLITE_UI: off }).ui, false, off);
    assert.equal(serveConfig({}, { MQLITE_UI: "on" }).ui, true);
    assert.equal(serveConfig({}, { MQLITE_CORS: "https://a.example" }).cors, "https://a.example");
    assert.equal(serveConfig({}, { MQLITE_MAX_MESSAGE_BYTES: "65536" }).maxMessageBytes, 65536);
    assert.equal(serveConfig({}, { MQLITE_DB: "file:./x.db" }).db, "file:./x.db");
    assert.equal(serveConfig({}, { MQLITE_DB: ":memory:" }).db, ":memory:");
  });
});

describe("MQLITE_TOKENS", () => {
  it("unset or empty generates one; off disables; a list is trimmed with blanks dropped", () => {
    assert.equal(parseTokens(undefined).mode, "generated");
    assert.equal(parseTokens("").mode, "generated");
    assert.notEqual(parseTokens(undefined).tokens[0], parseTokens(undefined).tokens[0]);
    assert.deepEqual(parseTokens("Off"), { mode: "off", tokens: [] });
    assert.deepEqual(parseTokens(" a , ,b "), { mode: "configured", tokens: ["a", "b"] });
  });

  it("takes scoped and named tokens, and stops on a bad scope or name", () => {
    assert.deepEqual(parseTokens("scraper:s1=monitor,s2=send:orders.*+listen:jobs.?"), {
      mode: "configured",
      tokens: ["scraper:s1=monitor", "s2=send:orders.*+listen:jobs.?"],
    });
    assert.throws(() => parseTokens("s1=admin"), /MQLITE_TOKENS: unknown scope "admin"/);
    assert.throws(() => parseTokens("s1=send:"), /MQLITE_TOKENS: scope "send:" needs a glob/);
    assert.throws(() => parseTokens("a:s1,a:s2"), /MQLITE_TOKENS: two tokens are named "a"/);
  });

  it("non-blank without a usable token fails", () => {
    assert.throws(() => parseTokens(","), /no usable token/);
    assert.throws(() => parseTokens("  "), /no usable token/);
  });
});

describe("addresses", () => {
  it("parses host:port, :port and [v6]:port", () => {
    assert.deepEqual(parseAddr(":6754", "x"), { host: "", port: 6754 });
    assert.deepEqual(parseAddr("[::1]:80", "x"), { host: "::1", port: 80 });
    assert.throws(() => parseAddr("6754", "x"), /not host:port/);
    assert.throws(() => parseAddr("h:99999", "x"), /not host:port/);
  });

  it("loopback is 127.0.0.0/8, ::1 and localhost; an empty host or 0.0.0.0 is not", () => {
    for (const h of ["127.0.0.1", "127.9.9.9", "::1", "localhost", "LOCALHOST"])
      assert.equal(isLoopback(h), true, h);
    for (const h of ["", "0.0.0.0", "::", "10.0.0.1", "example.com", "128.0.0.1"])
      assert.equal(isLoopback(h), false, h);
  });
});

describe("Go durations", () => {
  it("parses the original's forms", () => {
    assert.equal(parseGoDuration("336h"), 336 * 3_600_000);
    assert.equal(parseGoDuration("1h30m"), 5_400_000);
    assert.equal(parseGoDuration("1.5s"), 1500);
    assert.equal(parseGoDuration("250ms"), 250);
    assert.equal(parseGoDuration("0"), 0);
    assert.equal(parseGoDuration("-2m"), -120_000);
    assert.equal(parseGoDuration("1500us"), 2);
  });

  it("refuses anything else", () => {
    for (const bad of ["", "5", "1d", "h", "1h 30m", "1.2.3s", "."])
      assert.throws(() => parseGoDuration(bad), CliError, bad);
  });
});
