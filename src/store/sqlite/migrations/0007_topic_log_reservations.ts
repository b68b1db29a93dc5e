import { reserveIdsOf } from "./0006_sequence_reservations.js";
import type { Migration } from "./migration.js";

/**
 * The topic log's ids come from a reservation too (see migration 6): a publish to a topic with a
 * log no longer writes sqlite_sequence.
 */
export const topicLogReservations: Migration = {
  version: 7,
  name: "topic_log_reservations",
  apply: (db) => reserveIdsOf(db, "topic_messages", 7),
};
