import type { Broker } from "../contract/broker.js";
import type { Dashboard, DashboardOptions, DashboardPeriodic } from "./dashboard.js";
import { QueueError } from "./errors.js";

/** A broker borrowed by location: `release` gives it back (the last release closes it). */
export interface PooledBroker {
  broker: Promise<Broker>;
  release(): Promise<void>;
}

/**
 * What the job face asks of the program around it: brokers by location (`new Queue({ dbPath })`,
 * `{ dsn }`) and a served console (`queue.dashboard()`). The job face itself only knows `Broker`;
 * the package entry provides the storage-picking host (`src/job-host.ts`).
 */
export interface JobHost {
  acquireBroker(location: string, options: { schema?: string }): PooledBroker;
  serveDashboard(broker: Broker, options: DashboardOptions, periodic?: DashboardPeriodic): Promise<Dashboard>;
}

let provided: JobHost | undefined;

/** Sets the host the job face opens locations and serves dashboards through. */
export function provideJobHost(host: JobHost): void {
  provided = host;
}

function host(): JobHost {
  if (!provided)
    throw new QueueError(
      "no broker by location here: pass { broker }, or import the job face from the package entry",
    );
  return provided;
}

/** The broker at `location`, shared by every opener in this process (see `src/broker-pool.ts`). */
export function acquireBroker(location: string, options: { schema?: string } = {}): PooledBroker {
  return host().acquireBroker(location, options);
}

/** Serves the web console over `broker` through the host's HTTP server. */
export function serveDashboard(
  broker: Broker,
  options: DashboardOptions,
  periodic?: DashboardPeriodic,
): Promise<Dashboard> {
  return host().serveDashboard(broker, options, periodic);
}
