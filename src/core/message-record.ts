import type { MessageRecord } from "../contract/job-service.js";
import type { MessageState } from "../contract/types.js";
import { type MessageRow, PEEK_COLUMNS, peekedMessage } from "./message-row.js";

/** Every column of a record (read by `toRecord`): peek's, plus the queue and what the job face reads. */
export const RECORD_COLUMNS = `${PEEK_COLUMNS}, queue, result, delivered_at, settled_at, progress, unique_key,
  cancel_requested, redrive_count,
  (SELECT e.error FROM message_errors e WHERE e.seq_number = messages.id ORDER BY e.id DESC LIMIT 1) AS last_error`;

/** A message's row as `RECORD_COLUMNS` reads it. */
export interface RecordRow extends MessageRow {
  queue: string;
  state: MessageState;
  result: Buffer | null;
  delivered_at: number;
  settled_at: number;
  progress: number | null;
  unique_key: string | null;
  cancel_requested: number;
  redrive_count: number;
  last_error: string | null;
}

/** A message as the job face shows it: peek's fields, plus its outcome and progress. */
export function toRecord(row: RecordRow): MessageRecord {
  const m = peekedMessage(row) as MessageRecord;
  m.queue = row.queue;
  m.state = row.state;
  if (row.delivered_at) m.deliveredAt = row.delivered_at;
  if (row.settled_at) m.settledAt = row.settled_at;
  if (row.result !== null) m.result = row.result;
  if (row.progress !== null) m.progress = row.progress;
  if (row.unique_key !== null) m.uniqueKey = row.unique_key;
  if (row.cancel_requested) m.cancelRequested = true;
  if (row.redrive_count) m.redriveCount = row.redrive_count;
  if (row.last_error !== null) m.lastError = row.last_error;
  return m;
}
