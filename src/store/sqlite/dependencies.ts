import type { Dependency, DependencyOutcome } from "../../contract/job-service.js";
import { CHILD_FAILED_REASON } from "../../core/flow-input.js";
import type { DependencyOps, FailingChild, SettledChild } from "../../core/verbs/dependencies.js";
import type { SqliteDatabase } from "./database.js";

const SETTLED = `
  SELECT d.child, d.parent, m.state, m.dead_letter_description AS description
  FROM message_dependencies d LEFT JOIN messages m ON m.id = d.child
  WHERE d.outcome IS NULL AND (m.id IS NULL OR m.state IN ('completed', 'cancelled', 'dead_lettered'))`;

/** The statements of a flow's waits on SQLite (the rules: core/verbs/dependencies.ts). */
export class SqliteDependencyOps implements DependencyOps {
  private readonly insertRow;
  private readonly holdRow;
  private readonly settledOf;
  private readonly settledAll;
  private readonly resolveRow;
  private readonly openOf;
  private readonly failingOf;
  private readonly parentRow;
  private readonly activateRow;
  private readonly failRow;
  private readonly listOf;

  constructor(db: SqliteDatabase) {
    this.insertRow = db.prepare(
      "INSERT INTO message_dependencies (child, parent, fail_parent) VALUES (?, ?, ?) ON CONFLICT (child) DO NOTHING",
    );
    this.holdRow = db.prepare(
      "UPDATE messages SET state = 'deferred' WHERE id = ? AND state IN ('active', 'scheduled')",
    );
    this.settledOf = db.prepare(
      `${SETTLED} AND d.child IN (SELECT value FROM json_each(?)) ORDER BY d.parent`,
    );
    this.settledAll = db.prepare(`${SETTLED} ORDER BY d.parent`);
    this.resolveRow = db.prepare("UPDATE message_dependencies SET outcome = ?, error = ? WHERE child = ?");
    this.openOf = db.prepare(
      "SELECT 1 FROM message_dependencies WHERE parent = ? AND outcome IS NULL LIMIT 1",
    );
    this.failingOf = db.prepare(`
      SELECT child, outcome, error FROM message_dependencies
      WHERE parent = ? AND fail_parent = 1 AND outcome <> 'completed' ORDER BY child LIMIT 1`);
    this.parentRow = db.prepare("SELECT queue FROM messages WHERE id = ? AND state = 'deferred'");
    this.activateRow = db.prepare(
      "UPDATE messages SET state = 'active', visible_at = ? WHERE id = ? AND state = 'deferred'",
    );
    this.failRow = db.prepare(`
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

  hold(seq: number): void {
    this.holdRow.run(seq);
  }

  settledChildren(children?: readonly number[]): SettledChild[] {
    return (
      children ? this.settledOf.all(JSON.stringify(children)) : this.settledAll.all()
    ) as SettledChild[];
  }

  /** One writer at a time holds the file: nothing to lock. */
  lockParent(_parent: number): void {}

  resolve(child: number, outcome: DependencyOutcome, error: string | null): void {
    this.resolveRow.run(outcome, error, child);
  }

  hasOpen(parent: number): boolean {
    return this.openOf.get(parent) !== undefined;
  }

  waitingQueue(parent: number): string | undefined {
    return (this.parentRow.get(parent) as { queue: string } | undefined)?.queue;
  }

  failingChild(parent: number): FailingChild | undefined {
    return this.failingOf.get(parent) as FailingChild | undefined;
  }

  failParent(parent: number, description: string, now: number): void {
    this.failRow.run(description, now, parent);
  }

  activateParent(parent: number, now: number): void {
    this.activateRow.run(now, parent);
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
