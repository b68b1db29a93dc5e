/**
 * The statements the topics verbs need (declared and log topics: declare, read, ack, lease, nack, stats).
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in as the verbs move into the core
export interface TopicOps {}
