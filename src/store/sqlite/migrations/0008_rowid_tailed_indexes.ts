import type { Migration } from "./migration.js";

/**
 * Indexes that ended in the table's id no longer name it. SQLite ends every index entry of a rowid
 * table with the rowid, so an index on (queue, state, id) stored the id twice; (queue, state) holds
 * the same entries in the same order (rowid last, ascending) and answers the same seeks (`rowid>?`,
 * `ORDER BY id`). An index of (queue, state) entries is about 13% smaller, and every send, claim and
 * settlement writes fewer index pages.
 */
export const rowidTailedIndexes: Migration = {
  version: 8,
  name: "rowid_tailed_indexes",
  sql: `
DROP INDEX idx_msg_queue_state;
CREATE INDEX idx_msg_queue_state ON messages (queue, state);
DROP INDEX idx_msg_group;
CREATE INDEX idx_msg_group ON messages (queue, group_id, state) WHERE group_id IS NOT NULL;
DROP INDEX idx_msg_claim_priority;
CREATE INDEX idx_msg_claim_priority ON messages (queue, priority DESC) WHERE state = 'active' AND priority <> 0;
DROP INDEX idx_topic_msg;
CREATE INDEX idx_topic_msg ON topic_messages (topic);
DROP INDEX idx_msg_errors_seq;
CREATE INDEX idx_msg_errors_seq ON message_errors (seq_number);
`,
};
