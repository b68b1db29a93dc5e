/**
 * The statements the queues verbs need (queues and subscriptions: create, delete, list, stats, pause, subscribe, filters, reaping).
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in as the verbs move into the core
export interface QueueOps {}
