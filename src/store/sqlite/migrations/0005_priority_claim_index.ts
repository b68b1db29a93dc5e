import type { Migration } from "./migration.js";

/**
 * The claim index keeps only prioritized rows. Most messages have priority 0, and for them the
 * per-queue state index already is the claim order (active rows of a queue by sequence). A claim
 * takes the best row of a positive priority from the small index, else the first priority-0 row
 * from the state index, else the best row of a negative priority. A plain send then writes one
 * index entry instead of two, and a claim moves one.
 */
export const priorityClaimIndex: Migration = {
  version: 5,
  name: "priority_claim_index",
  sql: `
DROP INDEX idx_msg_claim;
CREATE INDEX idx_msg_claim_priority ON messages (queue, priority DESC, id) WHERE state = 'active' AND priority <> 0;
`,
};
