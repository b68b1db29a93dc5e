// Limits and fixed values both storage dialects apply the same way.

/** The reason a message dead-lettered without one is given. */
export const DEFAULT_REJECT_REASON = "AppRequested";

/** The reason given when a message runs out of deliveries. */
export const MAX_DELIVERY_REASON = "MaxDeliveryCountExceeded";

/** How long a worker may go without a heartbeat before another heartbeat reaps it. */
export const DEFAULT_WORKER_STALE_MS = 30_000;

/** The longest a long-poll (`receive`, `awaitSettled`) waits. */
export const MAX_WAIT_MS = 20_000;
