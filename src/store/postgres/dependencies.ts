import type { Dependency, DependencyOutcome } from "../../contract/job-service.js";
import type { MessageState } from "../../contract/types.js";
import { CHILD_FAILED_REASON, childFailedDescription, outcomeOf } from "../../core/flow-input.js";
import type { Conn } from "./db.js";

interface SettledChild {
  child: number;
  parent: number;
  state: MessageState | null;
  description: string | null;
}

const SETTLED = `
  SELECT d.child, d.parent, m.state, m.dead_letter_description AS description
  FROM message_dependencies d LEFT JOIN messages m ON m.id = d.child
  WHERE d.outcome IS NULL AND (m.id IS NULL OR m.state IN ('completed', 'cancelled', 'dead_lettered'))`;

/** What one `release` did: parents made active (by queue), parents dead-lettered. */
export interface PgReleaseOutcome {
  activated: Set<string>;
  failed: number[];
}

/**
 * The waits of a flow (PostgreSQL), as on SQLite. A resolver locks the parent's row before it
 * resolves a child's dependency, so of two children settled at once the second resolver sees the
 * first's resolution and releases the parent.
 */
export class PgDependencies {
  async add(c: Conn, child: number, parent: number, failParent: boolean): Promise<void> {
    await c.q(
      "INSERT INTO message_dependencies (child, parent, fail_parent) VALUES ($1, $2, $3) ON CONFLICT (child) DO NOTHING",
      [child, parent, failParent ? 1 : 0],
    );
  }

  async hold(c: Conn, seq: number): Promise<void> {
    await c.q("UPDATE messages SET state = 'deferred' WHERE id = $1 AND state IN ('active', 'scheduled')", [
      seq,
    ]);
  }

  /** The children whose dependency is open though they are settled (the sweep writes only when there are some). */
  async settledChildren(c: Conn): Promise<number[]> {
    return (await c.q<SettledChild>(SETTLED)).map((r) => Number(r.child));
  }

  async release(c: Conn, children: number[] | undefined, now: number): Promise<PgReleaseOutcome> {
    const out: PgReleaseOutcome = { activated: new Set(), failed: [] };
    let rows = children
      ? await c.q<SettledChild>(`${SETTLED} AND d.child = ANY($1::bigint[]) ORDER BY d.parent`, [children])
      : await c.q<SettledChild>(`${SETTLED} ORDER BY d.parent`);
    while (rows.length > 0) {
      const parents = new Set<number>();
      for (const r of rows) {
        const parent = Number(r.parent);
        if (!parents.has(parent)) {
          await c.q("SELECT 1 FROM messages WHERE id = $1 FOR UPDATE", [parent]);
          parents.add(parent);
        }
        const outcome = outcomeOf(r.state ?? undefined);
        await c.q(
          "UPDATE message_dependencies SET outcome = $1, error = $2 WHERE child = $3 AND outcome IS NULL",
          [outcome, outcome === "completed" ? null : r.description, r.child],
        );
      }
      const next: number[] = [];
      for (const p of parents) {
        const open = await c.q(
          "SELECT 1 FROM message_dependencies WHERE parent = $1 AND outcome IS NULL LIMIT 1",
          [p],
        );
        if (open.length > 0) continue;
        const [row] = await c.q<{ queue: string }>(
          "SELECT queue FROM messages WHERE id = $1 AND state = 'deferred'",
          [p],
        );
        if (!row) continue;
        const [failing] = await c.q<{ child: number; outcome: DependencyOutcome; error: string | null }>(
          `SELECT child, outcome, error FROM message_dependencies
           WHERE parent = $1 AND fail_parent = 1 AND outcome <> 'completed' ORDER BY child LIMIT 1`,
          [p],
        );
        if (failing) {
          await c.q(
            `UPDATE messages SET state = 'dead_lettered', dead_letter_reason = '${CHILD_FAILED_REASON}',
               dead_letter_description = $1, settled_at = $2 WHERE id = $3 AND state = 'deferred'`,
            [childFailedDescription(Number(failing.child), failing.outcome, failing.error), now, p],
          );
          out.failed.push(p);
          next.push(p);
        } else {
          await c.q(
            "UPDATE messages SET state = 'active', visible_at = $1 WHERE id = $2 AND state = 'deferred'",
            [now, p],
          );
          out.activated.add(row.queue);
        }
      }
      rows =
        next.length > 0
          ? await c.q<SettledChild>(`${SETTLED} AND d.child = ANY($1::bigint[]) ORDER BY d.parent`, [next])
          : [];
    }
    return out;
  }

  async list(c: Conn, parent: number): Promise<Dependency[]> {
    const rows = await c.q<{
      child: number;
      fail_parent: number;
      outcome: DependencyOutcome | null;
      error: string | null;
    }>(
      "SELECT child, fail_parent, outcome, error FROM message_dependencies WHERE parent = $1 ORDER BY child",
      [parent],
    );
    return rows.map((r) => {
      const d: Dependency = { seqNumber: Number(r.child), failParentOnFailure: r.fail_parent === 1 };
      if (r.outcome !== null) d.outcome = r.outcome;
      if (r.error !== null) d.error = r.error;
      return d;
    });
  }
}
