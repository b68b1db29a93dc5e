import type { PgMigration } from "./migration.js";

/**
 * Per-queue counts of messages by state (and `backing_off`: scheduled messages delivered before),
 * as on SQLite, so that `Stats` reads a few rows instead of counting a backlog. Nodes write at once,
 * so a change does not update a shared counter row (every writer of a queue would queue behind it
 * until commit, and two moving rows in opposite directions could deadlock): each statement that
 * inserts, moves or deletes messages appends its net change per (queue, state) to
 * `queue_count_deltas` in its own transaction, from the statement's transition tables, and the
 * maintenance loop folds the deltas into `queue_counts` (COMPACT_COUNTS). `Stats` adds the two.
 */
export const queueCounts: PgMigration = {
  version: 4,
  name: "queue_counts",
  sql: `
CREATE TABLE queue_counts (
  queue text NOT NULL,
  state text NOT NULL,
  n     bigint NOT NULL,
  PRIMARY KEY (queue, state)
);
CREATE TABLE queue_count_deltas (
  queue text NOT NULL,
  state text NOT NULL,
  n     bigint NOT NULL
);
CREATE INDEX idx_queue_count_deltas ON queue_count_deltas (queue);

INSERT INTO queue_counts (queue, state, n)
  SELECT queue, state, count(*) FROM messages GROUP BY queue, state;
INSERT INTO queue_counts (queue, state, n)
  SELECT queue, 'backing_off', count(*) FROM messages
  WHERE state = 'scheduled' AND delivery_count > 0 GROUP BY queue;

CREATE FUNCTION queue_counts_inserted() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO queue_count_deltas (queue, state, n)
    SELECT queue, state, count(*) FROM new_rows GROUP BY queue, state
    UNION ALL
    SELECT queue, 'backing_off', count(*) FROM new_rows
      WHERE state = 'scheduled' AND delivery_count > 0 GROUP BY queue;
  RETURN NULL;
END $$;

CREATE FUNCTION queue_counts_deleted() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO queue_count_deltas (queue, state, n)
    SELECT queue, state, -count(*) FROM old_rows GROUP BY queue, state
    UNION ALL
    SELECT queue, 'backing_off', -count(*) FROM old_rows
      WHERE state = 'scheduled' AND delivery_count > 0 GROUP BY queue;
  RETURN NULL;
END $$;

CREATE FUNCTION queue_counts_updated() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO queue_count_deltas (queue, state, n)
    SELECT queue, state, sum(n) FROM (
      SELECT queue, state, 1 AS n FROM new_rows
      UNION ALL
      SELECT queue, 'backing_off', 1 FROM new_rows WHERE state = 'scheduled' AND delivery_count > 0
      UNION ALL
      SELECT queue, state, -1 FROM old_rows
      UNION ALL
      SELECT queue, 'backing_off', -1 FROM old_rows WHERE state = 'scheduled' AND delivery_count > 0
    ) d
    GROUP BY queue, state HAVING sum(n) <> 0;
  RETURN NULL;
END $$;

CREATE TRIGGER queue_counts_inserted AFTER INSERT ON messages
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION queue_counts_inserted();
CREATE TRIGGER queue_counts_deleted AFTER DELETE ON messages
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION queue_counts_deleted();
CREATE TRIGGER queue_counts_updated AFTER UPDATE ON messages
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION queue_counts_updated();
`,
};
