import { Cron } from "croner";
import type { Hono } from "hono";
import { InvalidArgumentError, NotFoundError } from "../contract/errors.js";
import type { Logger } from "../contract/logger.js";
import type { ServerEnv } from "./env.js";
import { errorJson, json } from "./respond.js";

/** One periodic job as its registering process knows it (the job face's `PeriodicTask`). */
export interface PeriodicEntry {
  name: string;
  taskName: string;
  /** Its cron expression, when it fires on a cron. */
  cron?: string;
  /** Its interval, when it fires every so many ms (on the multiples of `everyMs` since the epoch). */
  everyMs?: number;
  queue: string;
  timezone?: string;
  enabled: boolean;
  nextRun?: number;
}

/**
 * The periodic jobs of the process that serves the console. They live in that process (they are
 * registered in code with `registerPeriodic`), so only `queue.dashboard()` has some to give.
 */
export interface PeriodicControl {
  list(): PeriodicEntry[];
  /** Stops firing; false when there is no such periodic job. */
  pause(name: string): boolean;
  resume(name: string): boolean;
}

/** The path of the console's periodic-jobs view. */
export const PERIODIC_PATH = "/ui-api/periodic";
/** How many next runs each entry lists. */
export const NEXT_RUNS = 3;

function nextRuns(entry: PeriodicEntry, now: Date): number[] {
  if (!entry.enabled) return [];
  const every = entry.everyMs;
  if (every !== undefined && Number.isSafeInteger(every) && every > 0) {
    const first = Math.floor(now.getTime() / every) * every + every;
    return Array.from({ length: NEXT_RUNS }, (_, i) => first + i * every);
  }
  if (entry.cron === undefined) return entry.nextRun !== undefined ? [entry.nextRun] : [];
  try {
    const cron = new Cron(entry.cron, {
      paused: true,
      ...(entry.timezone ? { timezone: entry.timezone } : {}),
    });
    return cron.nextRuns(NEXT_RUNS, now).map((d) => d.getTime());
  } catch {
    return entry.nextRun !== undefined ? [entry.nextRun] : [];
  }
}

/**
 * `GET /ui-api/periodic`: `{available, periodic: [{name, task, cron? | every_ms?, queue, timezone?,
 * enabled, next_runs_ms}]}` (`available` is false when this server has no periodic jobs to show).
 * `POST /ui-api/periodic/pause` and `/resume` with `{"name": …}`: 200 `{}`, or 404 `not_found`.
 * Behind the same Bearer gate as every route.
 */
export function registerPeriodicRoutes(
  app: Hono<ServerEnv>,
  control: PeriodicControl | undefined,
  logger: Logger,
): void {
  app.get(PERIODIC_PATH, (c) => {
    const now = new Date();
    const periodic = (control?.list() ?? []).map((e) => ({
      name: e.name,
      task: e.taskName,
      ...(e.cron !== undefined ? { cron: e.cron } : {}),
      ...(e.everyMs !== undefined ? { every_ms: e.everyMs } : {}),
      queue: e.queue,
      ...(e.timezone ? { timezone: e.timezone } : {}),
      enabled: e.enabled,
      next_runs_ms: nextRuns(e, now),
    }));
    return json(c, 200, { available: control !== undefined, periodic });
  });
  for (const action of ["pause", "resume"] as const) {
    app.post(`${PERIODIC_PATH}/${action}`, async (c) => {
      let name: unknown;
      try {
        name = ((await c.req.json()) as { name?: unknown }).name;
      } catch {
        name = undefined;
      }
      if (typeof name !== "string" || name === "")
        return errorJson(c, new InvalidArgumentError('a body {"name": "<periodic job>"} is required'));
      const done = control?.[action](name) === true;
      // An administrative change: one audit line, as the broker's own (access/audit.ts).
      const line = {
        audit: `${action}Periodic`,
        token_id: c.get("principal")?.id ?? null,
        target: { periodic: name },
        result: done ? "ok" : "not_found",
      };
      if (done) logger.info(line, "audit");
      else logger.warn(line, "audit");
      if (!done) return errorJson(c, new NotFoundError(`no periodic job named ${name}`));
      return json(c, 200, {});
    });
  }
}
