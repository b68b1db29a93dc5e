import { html } from "htm/preact";
import { Badge, Card, Empty, TableWrap } from "../components/ui.js";
import { access } from "../lib/access.js";
import { getJson, postJson } from "../lib/api.js";
import { attempt } from "../lib/feedback.js";
import { dateTime, relative } from "../lib/format.js";
import { live } from "../lib/live.js";
import { href } from "../lib/router.js";
import { session } from "../lib/session.js";
import { useStore } from "../lib/store.js";
import { useAsync } from "../lib/use-async.js";

/** One periodic job as `GET /ui-api/periodic` lists it. */
interface PeriodicJob {
  name: string;
  task: string;
  cron?: string;
  every_ms?: number;
  queue: string;
  timezone?: string;
  enabled: boolean;
  next_runs_ms: number[];
}

/** An interval as people write it: `90 s`, `5 min`, `250 ms`. */
function everyText(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms % 1000 === 0) return `${ms / 1000} s`;
  return `${ms} ms`;
}

/** The periodic (cron or interval) jobs of the process serving the console, with their next runs; pause and resume. */
export function Periodic() {
  const state = useStore(live);
  const rights = useStore(access);
  const tick = Math.floor((state.snapshot?.at_ms ?? 0) / 5000);
  const list = useAsync(
    () => getJson<{ available: boolean; periodic: PeriodicJob[] }>(session.get()!, "/ui-api/periodic"),
    [tick],
  );
  const now = state.snapshot?.at_ms ?? Date.now();
  const toggle = async (p: PeriodicJob) => {
    const action = p.enabled ? "pause" : "resume";
    const ok = await attempt(
      () => postJson(session.get()!, `/ui-api/periodic/${action}`, { name: p.name }),
      p.enabled ? `Paused ${p.name}` : `Resumed ${p.name}`,
    );
    if (ok) void list.reload();
  };
  const jobs = list.data?.periodic ?? [];
  return html`<div class="page">
    <header class="page-head"><h1>Periodic jobs</h1></header>
    <${Card} title="Periodic jobs">
      ${list.error && html`<p class="alert error" role="alert">${list.error}</p>`}
      ${
        list.loading && !list.data
          ? html`<p class="muted">Loading…</p>`
          : list.data && !list.data.available
            ? html`<${Empty}>
                Periodic jobs are registered in code (<code>queue.registerPeriodic</code>) and live in
                the process that registers them. Open the console that process serves with
                <code>queue.dashboard()</code> to see and pause them.
              <//>`
            : jobs.length === 0
              ? html`<${Empty}>No periodic job is registered.<//>`
              : html`<${TableWrap} label="Periodic jobs">
            <table class="data periodic stack">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Task</th>
                  <th scope="col">Schedule</th>
                  <th scope="col">Queue</th>
                  <th scope="col">Status</th>
                  <th scope="col">Next runs</th>
                  <th scope="col"><span class="sr-only">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                ${jobs.map(
                  (p) => html`<tr key=${p.name} data-periodic=${p.name}>
                    <th scope="row" data-label="Name">${p.name}</th>
                    <td data-label="Task">${p.task}</td>
                    <td data-label="Schedule">${
                      p.every_ms !== undefined
                        ? html`every <code>${everyText(p.every_ms)}</code>`
                        : html`<code>${p.cron}</code>${p.timezone ? html` <span class="muted">${p.timezone}</span>` : html` <span class="muted">UTC</span>`}`
                    }</td>
                    <td data-label="Queue"><a href=${href("queues", p.queue)}>${p.queue}</a></td>
                    <td data-label="Status"><${Badge} tone=${p.enabled ? "ok" : "warn"}>${p.enabled ? "active" : "paused"}<//></td>
                    <td data-label="Next runs" data-testid="next-runs">
                      ${
                        p.next_runs_ms.length === 0
                          ? html`<span class="muted">none while paused</span>`
                          : html`<ol class="next-runs">
                            ${p.next_runs_ms.map((t) => html`<li key=${t}>${dateTime(t)} <span class="muted">(${relative(t, now)})</span></li>`)}
                          </ol>`
                      }
                    </td>
                    <td>
                      ${
                        rights.manage &&
                        html`<button type="button" class="small" onClick=${() => toggle(p)} aria-label=${`${p.enabled ? "Pause" : "Resume"} ${p.name}`}>
                          ${p.enabled ? "Pause" : "Resume"}
                        </button>`
                      }
                    </td>
                  </tr>`,
                )}
              </tbody>
            </table>
          <//>`
      }
    <//>
  </div>`;
}
