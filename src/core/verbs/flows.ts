/**
 * The statements the flows verbs need (flows, job logs, events and metrics: dependencies, message logs, the event log, per-minute metrics).
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in as the verbs move into the core
export interface FlowOps {}
