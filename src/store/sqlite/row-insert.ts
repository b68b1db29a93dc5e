import type { Statement } from "better-sqlite3";
import type { SqliteDatabase } from "./database.js";
import type { QueueCounter } from "./queue-counter.js";
import type { SequenceNumbers } from "./sequence-numbers.js";

/** The columns a send writes, in the order `RowValues` holds them. */
export const INSERT_COLUMNS = [
  "queue",
  "state",
  "priority",
  "visible_at",
  "enqueued_at",
  "expires_at",
  "message_id",
  "correlation_id",
  "reply_to",
  "group_id",
  "content_type",
  "subject",
  "properties",
  "body",
  "max_deliveries",
  "lock_duration_ms",
  "unique_key",
  "topic",
  "subscription",
  // A row a send hands to a parked receiver is stored locked for it (see `HandOff`).
  "lock_token",
  "locked_until",
  "delivery_count",
  "delivered_at",
] as const;

export const COLUMN_COUNT = INSERT_COLUMNS.length;

const QUEUE = INSERT_COLUMNS.indexOf("queue");
const STATE = INSERT_COLUMNS.indexOf("state");

/**
 * Each column's default in the table (`undefined`: the column has none and is always written). A
 * value equal to its default is left out of the statement: SQLite writes the same bytes.
 */
const DEFAULTS: readonly unknown[] = INSERT_COLUMNS.map((c) => {
  if (c === "queue" || c === "state" || c === "enqueued_at" || c === "body") return undefined;
  if (c === "priority" || c === "visible_at" || c === "expires_at") return 0;
  if (c === "max_deliveries" || c === "lock_duration_ms") return 0;
  if (c === "locked_until" || c === "delivery_count" || c === "delivered_at") return 0;
  return null;
});

/** Prepared shapes kept; past this the cache starts over (shapes are few in practice). */
const MAX_SHAPES = 256;

/**
 * Writes rows of `messages` with statements shaped to the rows: a column every row leaves at its
 * default is not written, a value every row shares is bound once, and only the values that differ
 * from row to row are bound per row:
 *
 *   INSERT INTO messages (id, queue, state, ..., body)
 *   SELECT ? + column1, ?, ?, ..., column2 FROM (VALUES (0, ?), (1, ?), ...)
 *
 * Binding a value costs SQLite and its driver more than storing it: a batch of jobs (same queue,
 * task and options, one body each) binds one value per row instead of nineteen, which halves the
 * cost of the INSERT. The rows are inserted in the order given and take consecutive ids from
 * `ids`: the first is bound once, each row adds its index (a literal in the statement).
 */
export class RowInserter {
  private readonly shapes = new Map<string, Statement>();

  constructor(
    private readonly db: SqliteDatabase,
    private readonly ids: SequenceNumbers,
    private readonly counts: QueueCounter,
  ) {}

  /**
   * Inserts `rows` rows whose values are `values` (`COLUMN_COUNT` per row, in `INSERT_COLUMNS`
   * order) in one statement, and counts them in `queue_counts`; returns the last row's id.
   */
  run(values: readonly unknown[], rows: number): number {
    let varying = 0;
    let omitted = 0;
    for (let c = 0; c < COLUMN_COUNT; c++) {
      const first = values[c];
      let same = true;
      for (let r = 1; r < rows; r++) {
        if (values[r * COLUMN_COUNT + c] !== first) {
          same = false;
          break;
        }
      }
      if (!same) varying |= 1 << c;
      else if (first === DEFAULTS[c]) omitted |= 1 << c;
    }
    // The shared values once, then each row's varying ones (sized up front, written in place).
    const shared: number[] = [];
    const perRow: number[] = [];
    for (let c = 0; c < COLUMN_COUNT; c++) {
      if (varying & (1 << c)) perRow.push(c);
      else if (!(omitted & (1 << c))) shared.push(c);
    }
    const first = this.ids.take(rows);
    const params: unknown[] = new Array(1 + shared.length + rows * perRow.length);
    params[0] = first;
    let p = 1;
    for (const c of shared) params[p++] = values[c];
    for (let base = 0; perRow.length > 0 && base < rows * COLUMN_COUNT; base += COLUMN_COUNT) {
      for (const c of perRow) params[p++] = values[base + c];
    }
    this.statement(rows, varying, omitted).run(params);
    this.count(values, rows, varying);
    return first + rows - 1;
  }

  /** Counts the rows by queue and state: one upsert when they share both (a batch, a job burst). */
  private count(values: readonly unknown[], rows: number, varying: number): void {
    if (!(varying & ((1 << QUEUE) | (1 << STATE)))) {
      this.counts.inserted(values[QUEUE] as string, values[STATE] as string, rows);
      return;
    }
    const byKey = new Map<string, { queue: string; state: string; n: number }>();
    for (let base = 0; base < rows * COLUMN_COUNT; base += COLUMN_COUNT) {
      const queue = values[base + QUEUE] as string;
      const state = values[base + STATE] as string;
      const key = `${queue}\u0000${state}`;
      const seen = byKey.get(key);
      if (seen) seen.n++;
      else byKey.set(key, { queue, state, n: 1 });
    }
    for (const { queue, state, n } of byKey.values()) this.counts.inserted(queue, state, n);
  }

  private statement(rows: number, varying: number, omitted: number): Statement {
    const key = `${rows}:${varying}:${omitted}`;
    let stmt = this.shapes.get(key);
    if (!stmt) {
      if (this.shapes.size >= MAX_SHAPES) this.shapes.clear();
      stmt = this.db.prepare(shapeSql(rows, varying, omitted));
      this.shapes.set(key, stmt);
    }
    return stmt;
  }
}

/** The INSERT for `rows` rows with these varying and omitted columns (bit c: `INSERT_COLUMNS[c]`). */
export function shapeSql(rows: number, varying: number, omitted: number): string {
  const columns = ["id"];
  const select = [rows === 1 ? "?" : "? + column1"];
  let perRow = 0;
  INSERT_COLUMNS.forEach((name, c) => {
    if (omitted & (1 << c)) return;
    columns.push(name);
    select.push(varying & (1 << c) ? `column${++perRow + 1}` : "?");
  });
  const head = `INSERT INTO messages (${columns.join(", ")})`;
  if (rows === 1) return `${head} VALUES (${select.join(", ")})`;
  const marks = ", ?".repeat(perRow);
  const tuples = Array.from({ length: rows }, (_, i) => `(${i}${marks})`);
  return `${head} SELECT ${select.join(", ")} FROM (VALUES ${tuples.join(", ")})`;
}
