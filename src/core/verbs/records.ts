/**
 * The statements the records verbs need (job records: cancel, progress, browse, errors, delete settled, promote, remove, workers, named locks).
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in as the verbs move into the core
export interface RecordOps {}
