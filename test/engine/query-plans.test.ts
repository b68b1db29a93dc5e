import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import Database from "better-sqlite3";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { CLAIM_SQL, UNPRIORITIZED_CLAIM_SQL } from "../../src/store/sqlite/claim.js";
import { migrate } from "../../src/store/sqlite/migrate.js";

/** Binds every parameter of `sql` to a value (the plan does not depend on them) and explains it. */
function plan(db: Database.Database, sql: string): string[] {
  const stmt = db.prepare(`EXPLAIN QUERY PLAN ${sql}`);
  const named = [...new Set([...sql.matchAll(/@(\w+)/g)].map((m) => m[1]!))];
  const positional = sql.split("?").length - 1;
  const rows = (
    named.length > 0
      ? stmt.all(Object.fromEntries(named.map((n) => [n, n === "exclude" ? "[]" : 0])))
      : stmt.all(...Array.from({ length: positional }, () => 0))
  ) as { detail: string }[];
  return rows.map((r) => r.detail);
}

/**
 * No step of the plan reads a whole table of messages (a table-valued function over a bound JSON list,
 * the queue registry, one row per queue, and a one-row subquery's co-routine may be read whole).
 */
function assertNoScan(steps: string[]): void {
  for (const s of steps) {
    if (s.startsWith("SCAN") && !/^SCAN (json_each VIRTUAL TABLE|queues\b|\(subquery-\d+\)$)/.test(s)) {
      assert.fail(`full scan in plan: ${s}\n${steps.join("\n")}`);
    }
  }
}

function assertUses(steps: string[], index: RegExp): void {
  assert.ok(
    steps.some((s) => index.test(s)),
    `expected ${index} in plan:\n${steps.join("\n")}`,
  );
}

describe("query plans", () => {
  const db = new Database(":memory:");
  migrate(db, 0);

  for (const [family, sql] of Object.entries(CLAIM_SQL)) {
    it(`1.5 the ${family} claim seeks the prioritized rows' index, then the queue's active range, and probes with index seeks only`, () => {
      const steps = plan(db, sql);
      assertUses(steps, /USING INDEX idx_msg_claim_priority \(queue=\? AND priority>\?\)/);
      assertUses(steps, /USING INDEX idx_msg_queue_state \(queue=\? AND state=\?\)$/);
      for (const s of steps) {
        // The two one-row arms are read as co-routines; no table is scanned.
        assert.ok(
          !s.startsWith("SCAN") || /^SCAN \(subquery-\d+\)$/.test(s),
          `full scan in claim plan: ${s}`,
        );
        if (s.startsWith("SEARCH b")) assert.match(s, /idx_msg_(group|queue_state) \(.*id<\?\)/);
      }
    });
  }

  for (const [family, sql] of Object.entries(UNPRIORITIZED_CLAIM_SQL)) {
    it(`1.5 the ${family} claim of a queue without prioritized rows seeks the queue's active range alone`, () => {
      const steps = plan(db, sql);
      assertUses(steps, /USING INDEX idx_msg_queue_state \(queue=\? AND state=\?\)$/);
      assert.ok(!steps.some((s) => s.includes("idx_msg_claim_priority")), steps.join("\n"));
      assertNoScan(steps);
      for (const s of steps) {
        if (s.startsWith("SEARCH b")) assert.match(s, /idx_msg_(group|queue_state) \(.*id<\?\)/);
      }
    });
  }
});

/**
 * Every statement the engine prepares, captured as it opens a broker: the background loops, stats,
 * peek and the job face's gated claim are checked where the engine really uses them.
 */
describe("query plans of the background loops, stats, peek and the job face", async () => {
  const seen: string[] = [];
  const prepare = Database.prototype.prepare;
  Database.prototype.prepare = function (this: Database.Database, source: string) {
    seen.push(source);
    return prepare.call(this, source);
  } as typeof prepare;
  const broker = await openBroker(":memory:", { logger: silentLogger, background: false });
  Database.prototype.prepare = prepare;
  const db = (broker as unknown as { db: Database.Database }).db;
  after(() => broker.close());

  /** The one prepared statement whose text matches every pattern. */
  const statement = (...patterns: RegExp[]): string => {
    const found = [...new Set(seen)].filter((s) => patterns.every((p) => p.test(s)));
    assert.equal(found.length, 1, `${found.length} statements match ${patterns.join(" ")}`);
    return found[0]!;
  };

  it("the reaper seeks lapsed leases through the lease index", () => {
    const steps = plan(db, statement(/^\s*UPDATE messages SET/, /state = 'locked' AND locked_until <=/));
    assertUses(steps, /idx_msg_lease \(locked_until<\?\)/);
    assertNoScan(steps);
  });

  it("the scheduler activates due rows and finds the next due time through the due index", () => {
    const activate = plan(db, statement(/state = 'active' WHERE state = 'scheduled' AND visible_at <= \?/));
    assertUses(activate, /idx_msg_due \(visible_at<\?\)/);
    assertNoScan(activate);
    const next = plan(db, statement(/min\(visible_at\) AS due/));
    assertUses(next, /idx_msg_due/);
    assertNoScan(next);
  });

  it("the TTL sweep and the retention sweep seek the expiry index", () => {
    for (const sql of [
      statement(/^\s*UPDATE messages INDEXED BY idx_msg_expire SET state = 'dead_lettered'/),
      statement(/^\s*DELETE FROM messages INDEXED BY idx_msg_expire WHERE expires_at > 0/),
      statement(/IN \(SELECT id FROM messages INDEXED BY idx_msg_expire/),
    ]) {
      const steps = plan(db, sql);
      assertUses(steps, /idx_msg_expire \(expires_at>\? AND expires_at<\?\)/);
      assertNoScan(steps);
    }
  });

  it("stats read the kept counts by the queue's key, not its messages", () => {
    const counts = plan(db, statement(/SELECT state, n FROM queue_counts WHERE queue = \?/));
    assertUses(
      counts,
      /SEARCH queue_counts USING (?:COVERING )?INDEX sqlite_autoindex_queue_counts_1 \(queue=\?\)/,
    );
    assertNoScan(counts);
  });

  it("stats find the oldest live message with one seek per state, without sorting", () => {
    const steps = plan(db, statement(/SELECT min\(enqueued_at\) AS oldest FROM/));
    assert.equal(
      steps.filter((s) => /idx_msg_queue_state \(queue=\? AND state=\?\)/.test(s)).length,
      2,
      steps.join("\n"),
    );
    // The only scans are of the two one-row subqueries.
    assert.ok(!steps.some((s) => /^SCAN messages\b/.test(s)), steps.join("\n"));
    assert.ok(!steps.some((s) => s.includes("TEMP B-TREE")), steps.join("\n"));
  });

  it("peek reads one state's range in sequence order, without sorting", () => {
    const steps = plan(
      db,
      statement(/FROM messages WHERE queue = \? AND state = \? AND id >= \? ORDER BY id LIMIT \?/),
    );
    assertUses(steps, /idx_msg_queue_state \(queue=\? AND state=\? AND rowid>\?\)/);
    assertNoScan(steps);
    assert.ok(!steps.some((s) => s.includes("TEMP B-TREE")), steps.join("\n"));
  });

  it("the job face's gated claim seeks the claim index; its gates count through the lease index", () => {
    const gated = [...new Set(seen)].filter(
      (s) => /INDEXED BY idx_msg_claim_priority/.test(s) && /json_each\(@exclude\)/.test(s),
    );
    assert.equal(gated.length, 2, "grouped and strict gated claims");
    for (const sql of gated) {
      const steps = plan(db, sql);
      assertUses(steps, /USING INDEX idx_msg_claim_priority \(queue=\? AND priority>\?\)/);
      assertUses(steps, /USING INDEX idx_msg_queue_state \(queue=\? AND state=\?\)$/);
      assertNoScan(steps);
    }
    const unprioritized = [...new Set(seen)].filter(
      (s) =>
        /^\s*UPDATE messages SET state = 'locked'/.test(s) &&
        /json_each\(@exclude\)/.test(s) &&
        !/idx_msg_claim_priority/.test(s),
    );
    assert.equal(unprioritized.length, 2, "grouped and strict gated claims without prioritized rows");
    for (const sql of unprioritized) {
      const steps = plan(db, sql);
      assertUses(steps, /USING INDEX idx_msg_queue_state \(queue=\? AND state=\?\)$/);
      assertNoScan(steps);
    }
    // Which of the two a claim takes: one seek of the prioritized rows' partial index.
    const prioritized = plan(db, statement(/SELECT 1 FROM messages INDEXED BY idx_msg_claim_priority/));
    assertUses(prioritized, /USING COVERING INDEX idx_msg_claim_priority \(queue=\?\)/);
    const locked = plan(db, statement(/count\(\*\)( AS n)? FROM messages INDEXED BY idx_msg_lease/));
    assertUses(locked, /idx_msg_lease/);
    const bucket = plan(db, statement(/SELECT tokens, updated_at FROM rate_limits WHERE key = \?/));
    assertNoScan(bucket);
  });

  it("settlement and receipts find their row by key", () => {
    for (const sql of [
      statement(/^DELETE FROM messages WHERE id = @seq AND queue = @queue AND lock_token = @token/),
      statement(/SELECT 1 FROM settlement_receipts/),
      statement(/SELECT 1 FROM messages WHERE id = \? AND queue = \? AND state = 'completed'/),
    ]) {
      assertNoScan(plan(db, sql));
    }
  });
});
