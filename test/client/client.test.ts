import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { connect } from "../../src/client/index.js";
import {
  CanceledError,
  CancelledError,
  ClosedError,
  InternalError,
  InvalidArgumentError,
  LockLostError,
  MessageTooLargeError,
  NotFoundError,
  UnauthenticatedError,
  UnavailableError,
} from "../../src/contract/errors.js";
import { type Served, serve, TOKEN } from "../server/harness.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A `fetch` that answers every call with one canned response. */
const canned = (status: number, body: string) => async () =>
  new Response(body, { status, headers: { "content-type": "application/json" } });

describe("remote client", () => {
  let s: Served;
  before(async () => {
    s = await serve();
    await s.broker.createQueue("q");
  });
  after(() => s.close());

  it("round-trips bodies (string and bytes) and metadata", async () => {
    const b = connect(`${s.url}/`, { token: TOKEN });
    await b.send("q", [
      { body: "text", subject: "a.b", properties: { k: "v" }, messageId: "id1", priority: 3 },
      { body: new Uint8Array([0, 255, 1]) },
    ]);
    const got = await b.receive("q", { maxMessages: 10 });
    assert.equal(got.length, 2);
    assert.ok(Buffer.isBuffer(got[0]!.body));
    assert.equal(got[0]!.body.toString(), "text");
    assert.deepEqual(got[0]!.properties, { k: "v" });
    assert.equal(got[0]!.priority, 3);
    assert.deepEqual([...got[1]!.body], [0, 255, 1]);
    assert.deepEqual(
      await b.completeBatch(
        "q",
        got.map((m) => ({ seqNumber: m.seqNumber, lockToken: m.lockToken! })),
      ),
      got.map((m) => ({ seqNumber: m.seqNumber, ok: true })),
    );
    await b.close();
  });

  it("raises the same named error classes with the wire codes", async () => {
    const b = connect(s.url, { token: TOKEN });
    await assert.rejects(b.stats("nope"), (e) => e instanceof NotFoundError && e.code === "not_found");
    await assert.rejects(b.complete("q", 1, "x"), (e) => e instanceof LockLostError && e.status === 409);
    await assert.rejects(b.createQueue(""), InvalidArgumentError);
    const anonymous = connect(s.url);
    await assert.rejects(anonymous.listQueues(), UnauthenticatedError);
    const wrong = connect(s.url, { token: "wrong" });
    await assert.rejects(
      wrong.listQueues(),
      (e) => e instanceof UnauthenticatedError && e.code === "unauthenticated",
    );
  });

  it("refuses NaN and Infinity locally, as the embedded engine does", async () => {
    let calls = 0;
    const b = connect(s.url, {
      fetch: async (...args) => {
        calls++;
        return fetch(...args);
      },
    });
    await assert.rejects(b.send("q", { body: "x" }, { ttlMs: Number.NaN }), InvalidArgumentError);
    await assert.rejects(b.cancel("q", Number.POSITIVE_INFINITY), InvalidArgumentError);
    await assert.rejects(b.send("q", { body: 5 as never }), InvalidArgumentError);
    assert.equal(calls, 0);
  });

  it("a long-poll returns [] when its signal aborts, and fails cancelled (wire code canceled) when already aborted", async () => {
    const b = connect(s.url, { token: TOKEN });
    const abort = new AbortController();
    const started = performance.now();
    const parked = b.receive("q", { waitMs: 20_000, signal: abort.signal });
    await sleep(100);
    abort.abort(new Error("my reason"));
    assert.deepEqual(await parked, []);
    assert.ok(performance.now() - started < 2000);
    await assert.rejects(b.receive("q", { signal: abort.signal }), (err: unknown) => {
      assert.ok(err instanceof CancelledError);
      assert.ok(err instanceof CanceledError, "the deprecated alias names the same class");
      assert.equal(err.code, "canceled");
      return true;
    });
    await b.close();
  });

  it("close wakes parked long-polls with closed, waits for calls in flight, then refuses", async () => {
    // Its own queue: the server may claim the in-flight message for the parked receive before it
    // sees that receive's connection close (then the lease, not a give-back, brings it back).
    await s.broker.createQueue("closing");
    const b = connect(s.url, { token: TOKEN });
    const parked = b.receive("closing", { waitMs: 20_000 });
    await sleep(100);
    const inFlight = b.send("closing", { body: "in flight" });
    const closing = b.close();
    await assert.rejects(parked, ClosedError);
    await closing;
    assert.equal((await inFlight).length, 1);
    await assert.rejects(b.listQueues(), ClosedError);
    assert.equal((await s.broker.peek("closing")).length, 1);
  });

  it("a broker out of reach is UnavailableError (unavailable), with the reason and the URL", async () => {
    const net = await import("node:net");
    // A port nobody listens on: bind one, then free it.
    const port = await new Promise<number>((resolve) => {
      const srv = net.createServer().listen(0, "127.0.0.1", () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => resolve(p));
      });
    });
    const b = connect(`http://127.0.0.1:${port}`, { token: TOKEN });
    await assert.rejects(
      b.listQueues(),
      (e) =>
        e instanceof UnavailableError &&
        e.code === "unavailable" &&
        /ECONNREFUSED/.test(e.message) &&
        e.message.includes(`127.0.0.1:${port}`),
    );
    await b.close();
    assert.throws(() => connect("ftp://127.0.0.1"), InvalidArgumentError);
  });

  it("a base URL with a path prefix (a broker behind a proxy) keeps its prefix", async () => {
    const seen: string[] = [];
    const b = connect("http://proxy.example/mq/", {
      fetch: async (url) => {
        seen.push(String(url));
        return new Response('{"queues":[]}', { status: 200 });
      },
    });
    await b.listQueues();
    assert.deepEqual(seen, ["http://proxy.example/mq/mqlite.v1.AdminService/ListQueues"]);
  });

  it("maps error answers without a JSON body by status", async () => {
    await assert.rejects(
      connect("http://x", { fetch: canned(413, "<html>too big</html>") }).listQueues(),
      MessageTooLargeError,
    );
    await assert.rejects(
      connect("http://x", { fetch: canned(502, "bad gateway") }).listQueues(),
      InternalError,
    );
  });

  it("fills the extension fields' defaults for a server that does not send them", async () => {
    const b = connect("http://x", {
      fetch: canned(
        200,
        '{"queues":[{"name":"a","kind":"queue","lock_duration_ms":30000,"max_delivery_count":10,"default_ttl_ms":0,"dedup_window_ms":0}]}',
      ),
    });
    assert.deepEqual(await b.listQueues(), [
      {
        name: "a",
        kind: "queue",
        lockDurationMs: 30000,
        maxDeliveryCount: 10,
        defaultTtlMs: 0,
        dedupWindowMs: 0,
        orderingMode: "standard",
        deadLetterOnExpire: true,
        dlqMaxAgeMs: 0,
        dlqMaxCount: 0,
        dlqMaxBytes: 0,
      },
    ]);
    const subs = connect("http://x", { fetch: canned(200, '{"subscriptions":[{"topic":"t","name":"n"}]}') });
    assert.deepEqual(await subs.listSubscriptions(), [
      { topic: "t", name: "n", kind: "queue", paused: false, createdAt: 0 },
    ]);
  });

  it("status reports the server's auth", async () => {
    const st = await connect(s.url, { token: TOKEN }).status();
    assert.equal(st.auth, true);
    assert.equal(st.backend, "memory");
  });
});
