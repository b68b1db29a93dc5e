import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { silentLogger } from "../../src/contract/logger.js";
import { PostgresBroker } from "../../src/store/postgres/postgres-broker.js";
import { dropSchema, freshSchema, PG_DSN, requirePostgres } from "./pg.js";

await requirePostgres();

/** Records the text of every statement this process sends until `stop()`. */
function spyStatements(): { texts: string[]; stop: () => void } {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = proto.query;
  const texts: string[] = [];
  proto.query = function (this: unknown, ...args: unknown[]) {
    const config = args[0];
    texts.push(typeof config === "string" ? config : ((config as { text?: string })?.text ?? ""));
    return query.apply(this, args);
  };
  return { texts, stop: () => (proto.query = query) };
}

describe("PostgreSQL event log", () => {
  const schema = freshSchema("mqevents");
  let a: PostgresBroker;
  let b: PostgresBroker;

  before(async () => {
    a = await PostgresBroker.open(PG_DSN, { schema, logger: silentLogger, background: false });
    b = await PostgresBroker.open(PG_DSN, { schema, logger: silentLogger, background: false });
  });
  after(async () => {
    await a.close();
    await b.close();
    await dropSchema(schema);
  });

  it("an append is one statement, without BEGIN or COMMIT", async () => {
    const spy = spyStatements();
    await a.appendEvents([
      { type: "t", data: "1" },
      { type: "t", data: "2" },
    ]);
    spy.stop();
    assert.equal(spy.texts.length, 1, spy.texts.join("\n---\n"));
    assert.match(spy.texts[0]!, /INSERT INTO event_log/);
  });

  it("a reader following the ids of concurrent appends from two nodes misses none", async () => {
    const start = (await a.readEvents(0, { limit: 0 })).lastId;
    const appends: Promise<void>[] = [];
    const expected: string[] = [];
    for (let i = 0; i < 60; i++) {
      const events = Array.from({ length: 5 }, (_, k) => ({ type: "c", data: `${i}.${k}` }));
      expected.push(...events.map((e) => e.data));
      appends.push((i % 2 === 0 ? a : b).appendEvents(events));
    }
    let done = false;
    const all = Promise.all(appends).finally(() => {
      done = true;
    });
    const seen: string[] = [];
    let cursor = start;
    // Follows the log while the appends commit, then once more after the last one.
    for (let last = false; !last; ) {
      last = done;
      const page = await b.readEvents(cursor, { limit: 1000 });
      for (const e of page.events) {
        assert.ok(e.id > cursor, "ids grow along the log");
        cursor = e.id;
        seen.push(e.data);
      }
    }
    await all;
    assert.deepEqual([...seen].sort(), [...expected].sort(), "every event was read once, none skipped");
    // Within one append the events keep their order.
    for (let i = 0; i < 60; i++) {
      const mine = seen.filter((d) => d.startsWith(`${i}.`));
      assert.deepEqual(
        mine,
        Array.from({ length: 5 }, (_, k) => `${i}.${k}`),
      );
    }
  });
});
