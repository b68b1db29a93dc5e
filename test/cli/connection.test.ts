import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { normalizeEndpoint } from "../../src/cli/connect/endpoint.js";
import { resolveTarget } from "../../src/cli/connect/target.js";
import { tempDir } from "../support/temp.js";
import { cli, type Served, serveInProcess, TOKEN } from "./harness.js";

describe("endpoints and which broker a command reaches", () => {
  it("mqlite:// and mqlites:// DSNs imply port 6754; http(s) URLs are kept; a trailing / goes", () => {
    assert.equal(normalizeEndpoint("mqlite://broker"), "http://broker:6754");
    assert.equal(normalizeEndpoint("mqlites://broker.example.com"), "https://broker.example.com:6754");
    assert.equal(normalizeEndpoint("mqlite://10.0.0.5:7000/"), "http://10.0.0.5:7000");
    assert.equal(normalizeEndpoint("mqlite://[::1]"), "http://[::1]:6754");
    assert.equal(normalizeEndpoint("https://mq.example.com/prefix/"), "https://mq.example.com/prefix");
    assert.equal(normalizeEndpoint(" http://127.0.0.1:6754 "), "http://127.0.0.1:6754");
    for (const bad of ["", "broker:6754", "ftp://x", "http://", "http://u:p@h", "http://h/?q=1"])
      assert.throws(() => normalizeEndpoint(bad), { code: "invalid_argument" }, bad);
  });

  it("client mode wins; flags win over the environment; MQLITE_TOKEN goes only to the environment's endpoint", () => {
    const env = { MQLITE_ENDPOINT: "mqlite://a", MQLITE_TOKEN: "t", MQLITE_DB: "./x.db" };
    assert.deepEqual(resolveTarget({}, env), { mode: "remote", url: "http://a:6754", token: "t" });
    assert.deepEqual(resolveTarget({ endpoint: "http://a:6754" }, env), {
      mode: "remote",
      url: "http://a:6754",
      token: "t",
    });
    assert.deepEqual(resolveTarget({ endpoint: "http://b" }, env), { mode: "remote", url: "http://b" });
    assert.deepEqual(resolveTarget({ endpoint: "http://b", token: "u" }, env), {
      mode: "remote",
      url: "http://b",
      token: "u",
    });
    assert.deepEqual(resolveTarget({ token: "" }, env), { mode: "remote", url: "http://a:6754" });
    assert.deepEqual(resolveTarget({ db: "y.db" }, env), { mode: "embedded", db: "y.db" });
    assert.deepEqual(resolveTarget({}, { MQLITE_DB: "./x.db", MQLITE_TOKEN: "t" }), {
      mode: "embedded",
      db: "./x.db",
    });
    assert.deepEqual(resolveTarget({}, {}, { defaultEndpoint: "http://127.0.0.1:6754" }), {
      mode: "remote",
      url: "http://127.0.0.1:6754",
    });
    assert.throws(() => resolveTarget({}, {}), /no broker named/);
    assert.throws(() => resolveTarget({ db: "x", endpoint: "http://a" }, {}), /two brokers/);
    assert.throws(() => resolveTarget({ db: "x", token: "t" }, {}), /--token is for a served broker/);
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
      const [typed, typedWithToken, dsn, noCredential, both] = await Promise.all([
        cli(["list", "--endpoint", served.url], { env: { MQLITE_TOKEN: TOKEN } }),
        cli(["list", "--endpoint", served.url, "--token", TOKEN, "--output", "json"]),
        cli(["list", "--endpoint", `mqlite://127.0.0.1:${port}`, "--token", TOKEN, "--output", "json"]),
        cli(["list", "--token="], { env: envEndpoint }),
        cli(["list", "--output", "json"], { env: { ...envEndpoint, MQLITE_DB: tmp.file("other.db") } }),
      ]);
      assert.equal(typed.code, 1, "an ambient token is not sent to an endpoint typed on the command line");
      assert.match(typed.stderr, /^error: unauthenticated: /);
      assert.equal(noCredential.code, 1);
      assert.match(noCredential.stderr, /^error: unauthenticated: /);
      for (const r of [typedWithToken, dsn, both]) {
        assert.equal(r.code, 0, r.stderr);
        assert.deepEqual(
          JSON.parse(r.stdout).queues.map((q: { name: string }) => q.name),
          ["served-only"],
        );
      }
    });
  });
});
