import { html } from "htm/preact";
import { Badge, Card, Empty, TableWrap } from "../components/ui.js";
import { dateTime, duration, relative } from "../lib/format.js";
import { live } from "../lib/live.js";
import { api } from "../lib/session.js";
import { useStore } from "../lib/store.js";
import { useAsync } from "../lib/use-async.js";

/** A worker whose last heartbeat is older than this is marked stale (the broker reaps at 30 s). */
const STALE_MS = 30_000;

/** Every worker that sends heartbeats: its queues, host, concurrency and last heartbeat. */
export function Workers() {
  const state = useStore(live);
  const tick = Math.floor((state.snapshot?.at_ms ?? 0) / 5000);
  const workers = useAsync(() => api().call("listWorkers"), [tick]);
  const list = workers.data?.workers ?? [];
  const now = state.snapshot?.at_ms ?? Date.now();
  return html`<div class="page">
    <header class="page-head"><h1>Workers</h1></header>
    <${Card} title="Workers">
      ${workers.error && html`<p class="alert error" role="alert">${workers.error}</p>`}
      ${
        workers.loading && !workers.data
          ? html`<p class="muted">Loading…</p>`
          : list.length === 0
            ? html`<${Empty}>No worker has sent a heartbeat.<//>`
            : html`<${TableWrap} label="Every registered worker">
          <table class="data workers stack">
            <thead>
              <tr>
                <th scope="col">Worker</th>
                <th scope="col">Status</th>
                <th scope="col">Queues</th>
                <th scope="col">Host</th>
                <th scope="col" class="num">PID</th>
                <th scope="col" class="num">Concurrency</th>
                <th scope="col">Started</th>
                <th scope="col">Last heartbeat</th>
              </tr>
            </thead>
            <tbody>
              ${list.map((w) => {
                const age = now - (w.last_heartbeat_ms ?? 0);
                return html`<tr key=${w.worker_id} data-worker=${w.worker_id}>
                  <th scope="row" class="mono" data-label="Worker">${w.worker_id}</th>
                  <td data-label="Status"><${Badge} tone=${w.status === "active" ? "ok" : "warn"}>${w.status}<//></td>
                  <td data-label="Queues">${(w.queues ?? []).join(", ")}</td>
                  <td data-label="Host">${w.hostname ?? ""}</td>
                  <td class="num" data-label="PID">${w.pid ?? ""}</td>
                  <td class="num" data-label="Concurrency">${w.concurrency ?? ""}</td>
                  <td data-label="Started" title=${dateTime(w.started_at_ms)}>${relative(w.started_at_ms, now)}</td>
                  <td data-label="Last heartbeat" title=${dateTime(w.last_heartbeat_ms)}>
                    ${relative(w.last_heartbeat_ms, now)}
                    ${age > STALE_MS && html` <${Badge} tone="danger" title=${`No heartbeat for ${duration(age)}`}>stale<//>`}
                  </td>
                </tr>`;
              })}
            </tbody>
          </table>
        <//>`
      }
    <//>
  </div>`;
}
