import type { Dependency, DependencyOutcome } from "../../contract/job-service.js";
import type { MessageState } from "../../contract/types.js";
import { CHILD_FAILED_REASON, childFailedDescription, outcomeOf } from "../../core/flow-input.js";
import type { SqliteDatabase } from "./database.js";

interface SettledChild {
  child: number;
  parent: number;
  state: MessageState | null;
  description: string | null;
}

/** What one `release` did: parents made active (per queue), parents dead-lettered. */
export interface ReleaseOutcome {
  activated: Map<string, number>;
  failed: number[];
}

/**
 * The waits of a flow (SQLite): which message waits on which children, and the step that, once a
 * child is settled, resolves its dependency and releases (or fails) a parent left with none open.
 */
export class Dependencies {
  private readonly insertRow;
  private readonly holdRow;
  private readonly settledOf;
  private readonly settledAll;
  private readonly resolve;
  private readonly openOf;
  private readonly failingOf;
  private readonly parentRow;
  private readonly activate;
  private readonly fail;
  private readonly listOf;

  constructor(db: SqliteDatabase) {
    this.insertRow = db.prepare(
      "INSERT INTO message_dependencies (child, parent, fail_parent) VALUES (?, ?, ?) ON CONFLICT (child) DO NOTHING",
    );
    this.holdRow = db.prepare(
      "UPDATE messages SET state = 'deferred' WHERE id = ? AND state IN ('active', 'scheduled')",
    );
    const settled = `
      SELECT d.child, d.parent, m.state, m.dead_letter_description AS description
      FROM message_dependencies d LEFT JOIN messages m ON m.id = d.child
      WHERE d.outcome IS NULL AND (m.id IS NULL OR m.state IN ('completed', 'cancelled', 'dead_lettered'))`;
    this.settledOf = db.prepare(`${settled} AND d.child IN (SELECT value FROM json_each(?))`);
    this.settledAll = db.prepare(settled);
    this.resolve = db.prepare("UPDATE message_dependencies SET outcome = ?, error = ? WHERE child = ?");
    this.openOf = db.prepare(
      "SELECT 1 FROM message_dependencies WHERE parent = ? AND outcome IS NULL LIMIT 1",
    );
    this.failingOf = db.prepare(`
      SELECT child, outcome, error FROM message_dependencies
      WHERE parent = ? AND fail_parent = 1 AND outcome <> 'completed' ORDER BY child LIMIT 1`);
    this.parentRow = db.prepare("SELECT queue FROM messages WHERE id = ? AND state = 'deferred'");
    this.activate = db.prepare(
      "UPDATE messages SET state = 'active', visible_at = ? WHERE id = ? AND state = 'deferred'",
    );
    this.fail = db.prepare(`
      UPDATE messages SET state = 'dead_lettered', dead_letter_reason = '${CHILD_FAILED_REASON}',
        dead_letter_description = ?, settled_at = ?
      WHERE id = ? AND state = 'deferred'`);
    this.listOf = db.prepare(
      "SELECT child, fail_parent, outcome, error FROM message_dependencies WHERE parent = ? ORDER BY child",
    );
  }

  add(child: number, parent: number, failParent: boolean): void {
    this.insertRow.run(child, parent, failParent ? 1 : 0);
  }

  /** Makes a message wait for its children. */
  hold(seq: number): void {
    this.holdRow.run(seq);
  }

  /** The children whose dependency is open though they are settled (a read: the sweep writes only when there are some). */
  settledChildren(): number[] {
    return (this.settledAll.all() as SettledChild[]).map((r) => r.child);
  }

  /** See `JobService.releaseDependents`. Inside the caller's write transaction. */
  release(children: number[] | undefined, now: number): ReleaseOutcome {
    const out: ReleaseOutcome = { activated: new Map(), failed: [] };
    let rows = (
      children ? this.settledOf.all(JSON.stringify(children)) : this.settledAll.all()
    ) as SettledChild[];
    // A parent failed by its child is settled in turn: its own parent is looked at next round.
    while (rows.length > 0) {
      const parents = new Set<number>();
      for (const r of rows) {
        const outcome = outcomeOf(r.state ?? undefined);
        this.resolve.run(outcome, outcome === "completed" ? null : r.description, r.child);
        parents.add(r.parent);
      }
      const next: number[] = [];
      for (const p of parents) {
        if (this.openOf.get(p)) continue;
        const row = this.parentRow.get(p) as { queue: string } | undefined;
        if (!row) continue;
        const failing = this.failingOf.get(p) as
          | { child: number; outcome: DependencyOutcome; error: string | null }
          | undefined;
        if (failing) {
          this.fail.run(childFailedDescription(failing.child, failing.outcome, failing.error), now, p);
          out.failed.push(p);
          next.push(p);
        } else {
          this.activate.run(now, p);
          out.activated.set(row.queue, (out.activated.get(row.queue) ?? 0) + 1);
        }
      }
      rows = next.length > 0 ? (this.settledOf.all(JSON.stringify(next)) as SettledChild[]) : [];
    }
    return out;
  }

  list(parent: number): Dependency[] {
    const rows = this.listOf.all(parent) as {
      child: number;
      fail_parent: number;
      outcome: DependencyOutcome | null;
      error: string | null;
    }[];
    return rows.map((r) => {
      const d: Dependency = { seqNumber: r.child, failParentOnFailure: r.fail_parent === 1 };
      if (r.outcome !== null) d.outcome = r.outcome;
      if (r.error !== null) d.error = r.error;
      return d;
    });
  }
}
