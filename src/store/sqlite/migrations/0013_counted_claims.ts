import type { Migration } from "./migration.js";

/**
 * Claims are counted by the statements that claim, not by the move trigger: a claim locks its
 * messages one statement each, and the trigger ran two upserts per message (a fifth of a claim's
 * cost). The claim code moves its rows' count from `active` (or `deferred`) to `locked` once per
 * call (see `QueueCounter.moved`); the trigger skips exactly those moves, which only claims make.
 * Every other move and every delete keeps its trigger.
 */
export const countedClaims: Migration = {
  version: 13,
  name: "counted_claims",
  sql: `
DROP TRIGGER queue_counts_update;
CREATE TRIGGER queue_counts_update AFTER UPDATE OF queue, state, delivery_count ON messages
WHEN (old.state IS NOT new.state OR old.queue IS NOT new.queue
  OR (old.state = 'scheduled' AND old.delivery_count > 0) IS NOT (new.state = 'scheduled' AND new.delivery_count > 0))
  AND NOT (new.state = 'locked' AND old.state IN ('active', 'deferred') AND old.queue = new.queue)
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
`,
};
