/**
 * The statements the maintenance verbs need (the dead-letter queue and upkeep: redrive, purge, the background steps, retention).
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in as the verbs move into the core
export interface MaintenanceOps {}
