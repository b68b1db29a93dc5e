import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { normalizeEndpoint, parseEndpoint, sameBroker } from "../../src/cli/connect/endpoint.js";
import { resolveTarget } from "../../src/cli/connect/target.js";
import { tempDir } from "../support/temp.js";
import { cli, type Served, serveInProcess, TOKEN } from "./harness.js";

describe("endpoints and which broker a command reaches", () => {
  it("endpoint forms as the original: mqlite://[token@]host[:port] and ?tls=true; http(s) URLs as given", () => {
    assert.deepEqual(parseEndpoint("mqlite://broker"), { url: "http://broker:6754" });
    assert.deepEqual(parseEndpoint("mqlites://broker.example.com"), {
      url: "https://broker.example.com:6754",
    });
    assert.deepEqual(parseEndpoint("mqlite://broker?tls=true"), { url: "https://broker:6754" });
    assert.deepEqual(parseEndpoint("mqlite://broker?tls=1"), { url: "http://broker:6754" });
    assert.deepEqual(parseEndpoint("MQLITE://broker:7000/any/path?x=1"), { url: "http://broker:7000" });
    assert.deepEqual(parseEndpoint("mqlite://mqk%5Fabc:ignored@10.0.0.5:7000/"), {
      url: "http://10.0.0.5:7000",
      token: "mqk_abc",
    });
    assert.deepEqual(parseEndpoint("mqlite://[::1]"), { url: "http://[::1]:6754" });
    assert.deepEqual(parseEndpoint("https://mq.example.com/prefix//"), {
      url: "https://mq.example.com/prefix",
    });
    assert.equal(normalizeEndpoint(" http://127.0.0.1:6754 "), "http://127.0.0.1:6754");
    const cases: [string, RegExp][] = [
      ["", /empty connection string/],
      ["mqlite://", /missing host/],
      ["ftp://x", /unsupported scheme "ftp"/],
      ["file:./x.db", /unsupported scheme "file"/],
      ["HTTP://h", /unsupported scheme "http"/],
      ["http://u:p@h", /no credentials/],
      ["http://h/?q=1", /no query/],
    ];
    for (const [bad, message] of cases)
      assert.throws(() => parseEndpoint(bad), { code: "invalid_argument", message }, bad);
  });

  it("same broker: the same text or the same base URL", () => {
    assert.ok(sameBroker("mqlite://h", "http://h:6754"));
    assert.ok(sameBroker("mqlite://tok@h/", "mqlite://h:6754"));
    assert.ok(sameBroker("http://h:1/", "http://h:1"));
    assert.ok(!sameBroker("http://h:1", "https://h:1"));
    assert.ok(!sameBroker("http://h:1", "http://H2:1"));
    assert.ok(!sameBroker("ftp://h", "http://h"));
  });

  it("client mode wins; flags win over the environment; MQLITE_TOKEN goes only to the environment's endpoint", () => {
    const env = { MQLITE_ENDPOINT: "mqlite://a", MQLITE_TOKEN: "t", MQLITE_DB: "./x.db" };
    const warnings: string[] = [];
    const warn = (line: string) => warnings.push(line);
    assert.deepEqual(resolveTarget({}, env), { mode: "remote", url: "http://a:6754", token: "t" });
    assert.deepEqual(resolveTarget({ endpoint: "http://a:6754" }, env, { warn }), {
      mode: "remote",
      url: "http://a:6754",
      token: "t",
    });
    assert.deepEqual(warnings, []);
    assert.deepEqual(resolveTarget({ endpoint: "http://b" }, env, { warn }), {
      mode: "remote",
      url: "http://b",
    });
    assert.deepEqual(warnings, [
      "warning: --endpoint changes the target host; MQLITE_TOKEN is NOT forwarded to it — pass --token to authenticate",
    ]);
    assert.deepEqual(resolveTarget({ endpoint: "http://b", token: "u" }, env), {
      mode: "remote",
      url: "http://b",
      token: "u",
    });
    assert.deepEqual(resolveTarget({ token: "" }, env), { mode: "remote", url: "http://a:6754" });
    // The DSN's token, unless a non-empty one overrides it; `--token=` removes it.
    assert.deepEqual(resolveTarget({ endpoint: "mqlite://k@b" }, {}), {
      mode: "remote",
      url: "http://b:6754",
      token: "k",
    });
    assert.deepEqual(resolveTarget({ endpoint: "mqlite://k@b", token: "" }, {}), {
      mode: "remote",
      url: "http://b:6754",
    });
    assert.deepEqual(resolveTarget({ endpoint: "mqlite://k@b", token: "z" }, {}).mode, "remote");
    assert.deepEqual(resolveTarget({ db: "y.db" }, env), { mode: "embedded", db: "y.db" });
    assert.deepEqual(resolveTarget({ endpoint: "" }, env), { mode: "embedded", db: "./x.db" });
    assert.deepEqual(resolveTarget({}, { MQLITE_DB: "./x.db", MQLITE_TOKEN: "t" }), {
      mode: "embedded",
      db: "./x.db",
    });
    assert.deepEqual(resolveTarget({}, {}), { mode: "embedded", db: "./mq.db" });
    assert.deepEqual(resolveTarget({}, { MQLITE_DB: "" }), { mode: "embedded", db: "./mq.db" });
    assert.deepEqual(resolveTarget({}, {}, { defaultEndpoint: "http://127.0.0.1:6754" }), {
      mode: "remote",
      url: "http://127.0.0.1:6754",
    });
    assert.throws(() => resolveTarget({ db: "x", endpoint: "http://a" }, {}), /two brokers/);
  });

  describe("against a served broker (child processes)", () => {
    let served: Served;
    const tmp = tempDir("mqlite-cli-conn-");
    before(async () => {
      served = await serveInProcess();
      await served.broker.createQueue("served-only");
    });
    after(async () => {
      await served.close();
      tmp.cleanup();
    });

    it("sends a token only where it belongs, --token= sends none, and an endpoint beats MQLITE_DB", async () => {
      const port = new URL(served.url).port;
      const envEndpoint = { MQLITE_ENDPOINT: served.url, MQLITE_TOKEN: TOKEN };
      const [typed, typedWithToken, dsn, dsnToken, noCredential, both] = await Promise.all([
        cli(["list", "--endpoint", served.url], { env: { MQLITE_TOKEN: TOKEN } }),
        cli(["list", "--endpoint", served.url, "--token", TOKEN, "--output", "json"]),
        cli(["list", "--endpoint", `mqlite://127.0.0.1:${port}`, "--token", TOKEN, "--output", "json"]),
        cli(["list", "-endpoint", `mqlite://${TOKEN}@127.0.0.1:${port}/ignored`, "-output", "json"]),
        cli(["list", "--token="], { env: envEndpoint }),
        cli(["list", "--output", "json"], { env: { ...envEndpoint, MQLITE_DB: tmp.file("other.db") } }),
      ]);
      assert.equal(typed.code, 1, "an ambient token is not sent to an endpoint typed on the command line");
      assert.match(
        typed.stderr,
        /^warning: --endpoint changes the target host; MQLITE_TOKEN is NOT forwarded to it — pass --token to authenticate\nerror: unauthenticated: /,
      );
      assert.equal(noCredential.code, 1);
      assert.match(noCredential.stderr, /^error: unauthenticated: /);
      for (const r of [typedWithToken, dsn, dsnToken, both]) {
        assert.equal(r.code, 0, r.stderr);
        assert.deepEqual(
          JSON.parse(r.stdout).map((q: { name: string }) => q.name),
          ["served-only"],
        );
      }
    });
  });
});
