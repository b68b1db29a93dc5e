// A batch settlement (CompleteBatch, RenewBatch) and ReceiveDeferred reach each of their messages by primary key on
// PostgreSQL, however stale the planner's statistics: given `queue = … AND state = 'locked'` it read
// every locked row of the queue for each batch when the statistics said few rows were locked (a
// CompleteBatch of 64 took 64 ms with 20,000 messages in flight instead of 4 ms).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import pg from "pg";
import { silentLogger } from "../../src/contract/logger.js";
import { PostgresBroker } from "../../src/store/postgres/postgres-broker.js";
import { dropSchema, freshSchema, PG_DSN, requirePostgres } from "./pg.js";

await requirePostgres();

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  Plans?: PlanNode[];
}

/** How the plan reads `messages`: each scan as `<node type> <index>`. */
function messageScans(node: PlanNode, out: string[] = []): string[] {
  if (node["Relation Name"] === "messages" && !/^(Update|Delete|Insert|ModifyTable)$/.test(node["Node Type"]))
    out.push(`${node["Node Type"]} ${node["Index Name"] ?? ""}`.trim());
  for (const child of node.Plans ?? []) messageScans(child, out);
  return out;
}

/** Records the statements sent through `pg` whose text contains `marker`, with their values. */
function captureStatements(marker: string) {
  const seen: { text: string; values: unknown[] }[] = [];
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const config = args[0] as { text?: string; values?: unknown[] } | string;
    if (typeof config === "object" && config.text?.includes(marker))
      seen.push({ text: config.text, values: config.values ?? [] });
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  return { seen, restore: () => (pg.Client.prototype.query = query) };
}

describe("PostgreSQL: batch settlements and ReceiveDeferred reach their rows by primary key", () => {
  const schema = freshSchema("mqplan");
  // Enough rows (of 200 bytes) that reading them all costs more than 64 lookups by key.
  const LOCKED = 5000;
  let b: PostgresBroker;
  let admin: pg.Client;

  before(async () => {
    b = await PostgresBroker.open(PG_DSN, { schema, background: false, logger: silentLogger });
    admin = new pg.Client({ connectionString: PG_DSN });
    await admin.connect();
    await admin.query(`SET search_path = "${schema}"`);
    await b.createQueue("q");
    // Statistics of an empty table, kept: what a planner sees before autovacuum catches up.
    await admin.query("ALTER TABLE messages SET (autovacuum_enabled = false)");
    await admin.query("ANALYZE messages");
    await b.send(
      "q",
      Array.from({ length: LOCKED + 4 * 64 }, (_, i) => ({ body: `m${i}`.padEnd(200, ".") })),
    );
    for (let held = 0; held < LOCKED; )
      held += (await b.receive("q", { maxMessages: Math.min(256, LOCKED - held) })).length;
  });

  after(async () => {
    await admin.end();
    await b.close();
    await dropSchema(schema);
  });

  async function plansOf(
    marker: string,
    settle: (items: { seqNumber: number; lockToken: string }[]) => Promise<{ ok: boolean }[]>,
  ): Promise<string[]> {
    const batch = await b.receive("q", { maxMessages: 64 });
    assert.equal(batch.length, 64);
    const capture = captureStatements(marker);
    try {
      const results = await settle(batch.map((m) => ({ seqNumber: m.seqNumber, lockToken: m.lockToken! })));
      assert.deepEqual(
        results.map((r) => r.ok),
        batch.map(() => true),
        "every item settled",
      );
    } finally {
      capture.restore();
    }
    assert.equal(capture.seen.length, 1, `one ${marker} statement`);
    const { text, values } = capture.seen[0]!;
    const { rows } = await admin.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
      `EXPLAIN (FORMAT JSON) ${text}`,
      values,
    );
    return messageScans(rows[0]!["QUERY PLAN"][0].Plan);
  }

  it("CompleteBatch (deleted, kept, and the replay probes of items it missed)", async () => {
    for (const retainMs of [undefined, 60_000]) {
      const scans = await plansOf("DELETE FROM messages USING items", (items) =>
        b.completeBatch(
          "q",
          items.map((i) => ({ ...i, retainMs })),
        ),
      );
      assert.ok(scans.length > 0, "the plan reads messages");
      assert.deepEqual(
        scans.filter((s) => !/^Index (Only )?Scan messages_pkey$/.test(s)),
        [],
        `every read of messages goes through its primary key: ${scans.join(", ")}`,
      );
    }
  });

  it("RenewBatch", async () => {
    const scans = await plansOf("UPDATE messages SET locked_until", (items) => b.renewBatch("q", items));
    assert.ok(scans.length > 0, "the plan reads messages");
    assert.deepEqual(
      scans.filter((s) => !/^Index (Only )?Scan messages_pkey$/.test(s)),
      [],
      `every read of messages goes through its primary key: ${scans.join(", ")}`,
    );
  });

  it("ReceiveDeferred", async () => {
    const scans = await plansOf("m.state = 'deferred'", async (items) => {
      for (const i of items) await b.defer("q", i.seqNumber, i.lockToken);
      const got = await b.receiveDeferred(
        "q",
        items.map((i) => i.seqNumber),
      );
      return items.map((i) => ({ ok: got.some((m) => m.seqNumber === i.seqNumber) }));
    });
    assert.ok(scans.length > 0, "the plan reads messages");
    assert.deepEqual(
      scans.filter((s) => !/^Index (Only )?Scan messages_pkey$/.test(s)),
      [],
      `every read of messages goes through its primary key: ${scans.join(", ")}`,
    );
  });
});
