import type { Broker } from "../contract/broker.js";
import type { Logger } from "../contract/logger.js";
import { serveDashboard } from "./host.js";
import type { PeriodicTask } from "./types.js";

/** Options of `queue.dashboard()`. */
export interface DashboardOptions {
  /** Default 6754; 0 picks a free port. */
  port?: number;
  /** Default `127.0.0.1` (this machine only); `""` listens on every interface. */
  host?: string;
  /** Bearer tokens the console (and the API beside it) will ask for. Default: none (auth off). */
  tokens?: string[];
  /** `Access-Control-Allow-Origin`, as `startServer`'s `cors`. */
  cors?: string | false;
  /** The access log. Default: silent. */
  logger?: Logger;
  /** Serve a non-loopback `host` without tokens (refused otherwise), as `startServer`'s option. */
  insecureAllowRemote?: boolean;
}

/** The queue's periodic jobs, as the console's Periodic page lists, pauses and resumes them. */
export interface DashboardPeriodic {
  list(): PeriodicTask[];
  pause(name: string): boolean;
  resume(name: string): boolean;
}

/** A running console: open `url` in a browser. */
export interface Dashboard {
  /** The console's address, e.g. `http://127.0.0.1:6754/ui/`. */
  readonly url: string;
  /** The served broker's base URL (for `connect(apiUrl)` or the CLI's `--url`). */
  readonly apiUrl: string;
  /** Stops serving (the queue and its broker stay open). */
  close(): Promise<void>;
}

/**
 * Serves the web console over a broker: a served broker (the whole HTTP API, `/ui` on) that does
 * not close the broker when it stops. The host loads the server on first use, so the job face does
 * not load HTTP code unless asked to.
 */
export function startDashboard(
  broker: Broker,
  options: DashboardOptions = {},
  periodic?: DashboardPeriodic,
): Promise<Dashboard> {
  return serveDashboard(broker, options, periodic);
}
