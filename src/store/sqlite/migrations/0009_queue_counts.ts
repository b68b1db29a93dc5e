import type { Migration } from "./migration.js";

/**
 * Per-queue counts of messages by state, kept by triggers in the very statement (so the very
 * transaction) that inserts, moves or deletes a message: `Stats` reads a handful of rows instead of
 * counting a backlog (68-124 ms at a million messages, blocking the only thread). `backing_off`
 * counts the scheduled messages delivered before (waiting out an abandon's delay). A queue's rows
 * go with it. Filled from the messages already stored.
 */
export const queueCounts: Migration = {
  version: 9,
  name: "queue_counts",
  sql: `
CREATE TABLE queue_counts (
  queue TEXT NOT NULL,
  state TEXT NOT NULL,
  n     INTEGER NOT NULL,
  PRIMARY KEY (queue, state)
) STRICT;

INSERT INTO queue_counts (queue, state, n)
  SELECT queue, state, count(*) FROM messages GROUP BY queue, state;
INSERT INTO queue_counts (queue, state, n)
  SELECT queue, 'backing_off', count(*) FROM messages
  WHERE state = 'scheduled' AND delivery_count > 0 GROUP BY queue;

CREATE TRIGGER queue_counts_insert AFTER INSERT ON messages BEGIN
  INSERT INTO queue_counts (queue, state, n) VALUES (new.queue, new.state, 1)
    ON CONFLICT (queue, state) DO UPDATE SET n = n + 1;
  INSERT INTO queue_counts (queue, state, n)
    SELECT new.queue, 'backing_off', 1 WHERE new.state = 'scheduled' AND new.delivery_count > 0
    ON CONFLICT (queue, state) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER queue_counts_delete AFTER DELETE ON messages BEGIN
  UPDATE queue_counts SET n = n - 1 WHERE queue = old.queue AND state = old.state;
  UPDATE queue_counts SET n = n - 1
    WHERE old.state = 'scheduled' AND old.delivery_count > 0 AND queue = old.queue AND state = 'backing_off';
END;

CREATE TRIGGER queue_counts_update AFTER UPDATE OF queue, state, delivery_count ON messages
WHEN old.state IS NOT new.state OR old.queue IS NOT new.queue
  OR (old.state = 'scheduled' AND old.delivery_count > 0) IS NOT (new.state = 'scheduled' AND new.delivery_count > 0)
BEGIN
  UPDATE queue_counts SET n = n - 1 WHERE queue = old.queue AND state = old.state;
  INSERT INTO queue_counts (queue, state, n) VALUES (new.queue, new.state, 1)
    ON CONFLICT (queue, state) DO UPDATE SET n = n + 1;
  UPDATE queue_counts SET n = n - 1
    WHERE old.state = 'scheduled' AND old.delivery_count > 0 AND queue = old.queue AND state = 'backing_off';
  INSERT INTO queue_counts (queue, state, n)
    SELECT new.queue, 'backing_off', 1 WHERE new.state = 'scheduled' AND new.delivery_count > 0
    ON CONFLICT (queue, state) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER queue_counts_drop AFTER DELETE ON queues BEGIN
  DELETE FROM queue_counts WHERE queue = old.name;
END;
`,
};
