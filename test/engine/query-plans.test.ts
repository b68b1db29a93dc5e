import assert from "node:assert/strict";
import { describe, it } from "node:test";
import Database from "better-sqlite3";
import { CLAIM_SQL } from "../../src/engine/claim.js";
import { migrate } from "../../src/store/migrate.js";

function plan(db: Database.Database, sql: string): string[] {
  const rows = db
    .prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .all({ queue: "q", now: 0, lockUntil: 0, token: "t" }) as {
    detail: string;
  }[];
  return rows.map((r) => r.detail);
}

describe("query plans", () => {
  const db = new Database(":memory:");
  migrate(db, 0);

  for (const [family, sql] of Object.entries(CLAIM_SQL)) {
    it(`1.5 the ${family} claim seeks the partial claim index and probes with index seeks only`, () => {
      const steps = plan(db, sql);
      assert.ok(
        steps.some((s) => s.includes("USING INDEX idx_msg_claim (queue=?)")),
        steps.join("\n"),
      );
      for (const s of steps) {
        assert.ok(!s.startsWith("SCAN"), `full scan in claim plan: ${s}`);
        if (s.startsWith("SEARCH b")) assert.match(s, /idx_msg_(group|queue_state) \(.*id<\?\)/);
      }
    });
  }
});
