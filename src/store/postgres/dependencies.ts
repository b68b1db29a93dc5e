import type { Dependency, DependencyOutcome } from "../../contract/job-service.js";
import { CHILD_FAILED_REASON } from "../../core/flow-input.js";
import type { Async } from "../../core/port.js";
import type { DependencyOps, FailingChild, SettledChild } from "../../core/verbs/dependencies.js";
import type { Conn } from "./db.js";

const SETTLED = `
  SELECT d.child, d.parent, m.state, m.dead_letter_description AS description
  FROM message_dependencies d LEFT JOIN messages m ON m.id = d.child
  WHERE d.outcome IS NULL AND (m.id IS NULL OR m.state IN ('completed', 'cancelled', 'dead_lettered'))`;

/**
 * The statements of a flow's waits on PostgreSQL (the rules: core/verbs/dependencies.ts). A
 * resolver locks the parent's row before it resolves a child's dependency, so of two children
 * settled at once the second resolver sees the first's resolution and releases the parent.
 */
export class PgDependencyOps implements Async<DependencyOps> {
  constructor(private readonly c: Conn) {}

  async add(child: number, parent: number, failParent: boolean): Promise<void> {
    await this.c.q(
      "INSERT INTO message_dependencies (child, parent, fail_parent) VALUES ($1, $2, $3) ON CONFLICT (child) DO NOTHING",
      [child, parent, failParent ? 1 : 0],
    );
  }

  async hold(seq: number): Promise<void> {
    await this.c.q(
      "UPDATE messages SET state = 'deferred' WHERE id = $1 AND state IN ('active', 'scheduled')",
      [seq],
    );
  }

  async settledChildren(children?: readonly number[]): Promise<SettledChild[]> {
    const rows = children
      ? await this.c.q<SettledChild>(`${SETTLED} AND d.child = ANY($1::bigint[]) ORDER BY d.parent`, [
          children,
        ])
      : await this.c.q<SettledChild>(`${SETTLED} ORDER BY d.parent`);
    return rows.map((r) => ({ ...r, child: Number(r.child), parent: Number(r.parent) }));
  }

  async lockParent(parent: number): Promise<void> {
    await this.c.q("SELECT 1 FROM messages WHERE id = $1 FOR UPDATE", [parent]);
  }

  async resolve(child: number, outcome: DependencyOutcome, error: string | null): Promise<void> {
    await this.c.q(
      "UPDATE message_dependencies SET outcome = $1, error = $2 WHERE child = $3 AND outcome IS NULL",
      [outcome, error, child],
    );
  }

  async hasOpen(parent: number): Promise<boolean> {
    const rows = await this.c.q(
      "SELECT 1 FROM message_dependencies WHERE parent = $1 AND outcome IS NULL LIMIT 1",
      [parent],
    );
    return rows.length > 0;
  }

  async waitingQueue(parent: number): Promise<string | undefined> {
    const [row] = await this.c.q<{ queue: string }>(
      "SELECT queue FROM messages WHERE id = $1 AND state = 'deferred'",
      [parent],
    );
    return row?.queue;
  }

  async failingChild(parent: number): Promise<FailingChild | undefined> {
    const [row] = await this.c.q<FailingChild>(
      `SELECT child, outcome, error FROM message_dependencies
       WHERE parent = $1 AND fail_parent = 1 AND outcome <> 'completed' ORDER BY child LIMIT 1`,
      [parent],
    );
    return row ? { ...row, child: Number(row.child) } : undefined;
  }

  async failParent(parent: number, description: string, now: number): Promise<void> {
    await this.c.q(
      `UPDATE messages SET state = 'dead_lettered', dead_letter_reason = '${CHILD_FAILED_REASON}',
         dead_letter_description = $1, settled_at = $2 WHERE id = $3 AND state = 'deferred'`,
      [description, now, parent],
    );
  }

  async activateParent(parent: number, now: number): Promise<void> {
    await this.c.q(
      "UPDATE messages SET state = 'active', visible_at = $1 WHERE id = $2 AND state = 'deferred'",
      [now, parent],
    );
  }

  async list(parent: number): Promise<Dependency[]> {
    const rows = await this.c.q<{
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
