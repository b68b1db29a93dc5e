// Imports every case file so that runConformance sees them all.
import "./cases/peek-lock.case.js";
import "./cases/settlement.case.js";
import "./cases/idempotency.case.js";
import "./cases/dedup.case.js";
import "./cases/ordering.case.js";
import "./cases/priority.case.js";
import "./cases/dead-letter.case.js";
import "./cases/scheduling-ttl.case.js";
import "./cases/dlq-retention.case.js";
import "./cases/storage.case.js";
import "./cases/receive-peek.case.js";
import "./cases/queues-admin.case.js";
import "./cases/concurrency.case.js";
import "./cases/bad-input.case.js";
import "./cases/topics.case.js";
import "./cases/filters.case.js";
