/**
 * The statements the claim verbs need (receive, receiveDeferred, receiveAny, peek: claiming with ordering, priority, gates and long-polls).
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in as the verbs move into the core
export interface ClaimOps {}
