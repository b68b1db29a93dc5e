import { RECEIPT_TTL_MS, type SettleOperation } from "../../core/receipts.js";
import type { SqliteDatabase } from "./database.js";

/**
 * Writes the receipts of the kept completions among the rows `where` selects (a condition on
 * `messages`), for those completed less than a receipt's lifetime ago. A completion kept that long
 * writes no receipt: its row answers an exact replay (see `Settler.complete`). Run before such rows
 * are deleted, so that a replay still succeeds for the rest of the receipt's lifetime. Its one
 * parameter after `where`'s is the earliest settlement time still answered (now - RECEIPT_TTL_MS).
 */
export function keptCompletionReceiptsSql(where: string): string {
  return `
    INSERT OR IGNORE INTO settlement_receipts (queue, seq_number, lock_token, operation, args, created_at, expires_at)
    SELECT queue, id, lock_token, 'completed', '', settled_at, settled_at + ${RECEIPT_TTL_MS} FROM messages
    WHERE ${where} AND state = 'completed' AND lock_token IS NOT NULL AND settled_at > ?`;
}

/**
 * Receipts make a settlement idempotent: a lost response can be retried, and the replay succeeds
 * only if it is the identical request (queue, seq, token, verb and arguments).
 */
export class Receipts {
  private readonly insert;
  private readonly find;

  constructor(db: SqliteDatabase) {
    this.insert = db.prepare(`
      INSERT OR IGNORE INTO settlement_receipts (queue, seq_number, lock_token, operation, args, created_at, expires_at)
      VALUES (?, ?, ?, ?, ?, ?, ?)`);
    this.find = db.prepare(`
      SELECT 1 FROM settlement_receipts
      WHERE queue = ? AND seq_number = ? AND lock_token = ? AND operation = ? AND args = ? AND expires_at > ?`);
  }

  write(queue: string, seq: number, token: string, op: SettleOperation, args: string, now: number): void {
    this.insert.run(queue, seq, token, op, args, now, now + RECEIPT_TTL_MS);
  }

  has(queue: string, seq: number, token: string, op: SettleOperation, args: string, now: number): boolean {
    return this.find.get(queue, seq, token, op, args, now) !== undefined;
  }
}
