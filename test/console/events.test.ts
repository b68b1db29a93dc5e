import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { ConsoleSnapshot, SnapshotTotals } from "../../src/wire/console-events.js";
import { AUTH, type Served, serve } from "../server/harness.js";

/** Reads server-sent events from a response until `enough` says stop (or the deadline passes). */
async function readEvents(
  res: Response,
  enough: (events: { event: string; data: unknown }[]) => boolean,
  deadlineMs = 10_000,
): Promise<{ event: string; data: unknown }[]> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const events: { event: string; data: unknown }[] = [];
  let buffer = "";
  const deadline = Date.now() + deadlineMs;
  try {
    while (!enough(events) && Date.now() < deadline) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut = buffer.indexOf("\n\n");
      while (cut >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = block
          .split("\n")
          .filter((l) => l.startsWith("data: "))
          .map((l) => l.slice(6))
          .join("\n");
        if (event) events.push({ event, data: JSON.parse(data) });
        cut = buffer.indexOf("\n\n");
      }
    }
  } finally {
    await reader.cancel();
  }
  return events;
}

const snapshots = (events: { event: string; data: unknown }[]) =>
  events.filter((e) => e.event === "snapshot").map((e) => e.data as ConsoleSnapshot);

describe("the console's live feed (GET /ui-api/events)", () => {
  let s: Served;
  before(async () => {
    s = await serve();
  });
  after(() => s.close());

  it("needs the Bearer token like every RPC", async () => {
    const res = await fetch(`${s.url}/ui-api/events`);
    assert.equal(res.status, 401);
    assert.equal((await res.json()).code, "unauthenticated");
  });

  it("sends the recent history, then a snapshot a second with counts and cumulative counters", async () => {
    await s.broker.createQueue("orders");
    await s.broker.subscribe("news", "news-all");
    await s.broker.send("orders", [{ body: "a" }, { body: "b" }, { body: "c" }]);
    const [m] = await s.broker.receive("orders");
    await s.broker.complete("orders", m!.seqNumber, m!.lockToken!);

    const res = await fetch(`${s.url}/ui-api/events`, { headers: AUTH });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
    const events = await readEvents(res, (evs) => snapshots(evs).length >= 1);
    assert.equal(events[0]?.event, "history");
    assert.ok(Array.isArray(events[0]?.data));
    const [snap] = snapshots(events);
    assert.ok(snap);
    assert.equal(snap.counters, true);
    const orders = snap.queues.find((q) => q.name === "orders");
    assert.deepEqual(
      { active: orders?.active, sent: orders?.sent_total, completed: orders?.completed_total },
      { active: 2, sent: 3, completed: 1 },
    );
    assert.deepEqual(snap.subscriptions, [{ topic: "news", name: "news-all", kind: "queue", paused: false }]);
    assert.equal(snap.totals.backlog, 2);
    assert.equal(snap.totals.sent_total, 3);
  });

  it("a publish counts once per subscription copy; the history grows for later pages", async () => {
    await s.broker.send("news", { body: "x" });
    const res = await fetch(`${s.url}/ui-api/events`, { headers: AUTH });
    const events = await readEvents(res, (evs) => snapshots(evs).some((x) => x.totals.sent_total >= 4));
    const last = snapshots(events).at(-1)!;
    assert.equal(last.queues.find((q) => q.name === "news-all")?.sent_total, 1);
    const history = events[0]?.data as SnapshotTotals[];
    assert.ok(history.length >= 1, "the first stream left totals behind");
    assert.ok(history.every((h) => typeof h.at_ms === "number" && typeof h.backlog === "number"));
  });

  it("Status carries the durability setting as `sync`", async () => {
    const st = (await s.rpc("AdminService/Status")).json;
    assert.ok(["off", "normal", "full", "extra"].includes(st.sync), st.sync);
  });

  it("a graceful stop ends open streams at once", async () => {
    const other = await serve();
    const res = await fetch(`${other.url}/ui-api/events`, { headers: AUTH });
    const reader = res.body!.getReader();
    await reader.read();
    const started = Date.now();
    await other.close();
    assert.ok(Date.now() - started < 5000, "not held for the grace period");
    for (;;) if ((await reader.read()).done) break;
  });
});
