/**
 * The statements the send verbs need (send, schedule, cancel, publish, sendFlow, sendDebounced: insertion, fan-out, dedup).
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in as the verbs move into the core
export interface SendOps {}
