import { html } from "htm/preact";
import { LineChart } from "../components/chart.js";
import { CountsTable, STATES } from "../components/counts.js";
import { Badge, Card, Empty, Facts } from "../components/ui.js";
import { bytes, count, duration, plural, rate } from "../lib/format.js";
import { live, rates } from "../lib/live.js";
import { api } from "../lib/session.js";
import { useStore } from "../lib/store.js";
import { useAsync } from "../lib/use-async.js";

export function Charts(props: {
  points: import("../lib/live.js").Point[];
  counters: boolean;
  label?: string;
}) {
  const sent = rates(props.points, "sent");
  const completed = rates(props.points, "completed");
  const backlog = props.points.map((p) => p.backlog);
  return html`<div class="charts">
    <${LineChart}
      title=${`${props.label ?? ""}Throughput`}
      testid="throughput-chart"
      series=${[
        { label: "sent", color: "var(--c-sent)", values: sent, format: rate },
        { label: "completed", color: "var(--c-done)", values: completed, format: rate },
      ]}
    />
    <${LineChart}
      title=${`${props.label ?? ""}Backlog`}
      testid="backlog-chart"
      series=${[{ label: "backlog", color: "var(--c-backlog)", values: backlog, format: (v: number) => count(Math.round(v)) }]}
    />
    ${!props.counters && html`<p class="hint">This broker does not count sends and completions; rates stay at 0.</p>`}
  </div>`;
}

export function Overview() {
  const state = useStore(live);
  const status = useAsync(() => api().call("status"), []);
  const snap = state.snapshot;
  const st = status.data;
  const totals = Object.fromEntries(
    STATES.map(([key]) => [key, snap?.queues.reduce((n, q) => n + q[key], 0) ?? 0]),
  ) as Record<(typeof STATES)[number][0], number>;

  return html`<div class="page">
    <header class="page-head">
      <h1>Overview</h1>
    </header>
    <div class="grid two">
      <${Card} title="Broker">
        ${status.error && html`<p class="alert error" role="alert">${status.error}</p>`}
        ${
          st &&
          html`<${Facts}
          label="Broker status"
          items=${[
            ["Database", html`<span class="mono">${st.location}</span>`],
            ["Backend", `${st.backend}${st.remote ? " (remote)" : ""}`],
            ["Size on disk", bytes(snap?.db_size_bytes ?? st.db_size_bytes)],
            ["Uptime", duration(snap?.uptime_ms ?? st.uptime_ms)],
            ["Sync mode", st.sync ?? "—"],
            [
              "Auth",
              st.auth ? html`<${Badge} tone="ok">bearer token<//>` : html`<${Badge} tone="warn">auth off<//>`,
            ],
            ["Read latency", `${st.ping_ms} ms`],
            ["Version", `${st.version} (schema ${st.schema_version})`],
            ["Queues", `${plural(st.queues, "queue")}, ${plural(st.subscriptions, "subscription")}`],
          ]}
        />`
        }
      <//>
      <${Card} title="Messages by state">
        <div class="totals" role="list" aria-label="Messages by state, every queue">
          ${STATES.map(
            ([key, label]) => html`<div class=${`total ${key}`} role="listitem" key=${key}>
              <span class="total-n" data-total=${key}>${count(totals[key])}</span>
              <span class="total-label">${label}</span>
            </div>`,
          )}
        </div>
      <//>
    </div>
    <${Card} title="Live">
      <${Charts} points=${state.totals} counters=${snap?.counters ?? true} />
    <//>
    <${Card} title="Queues and subscriptions">
      ${
        !snap
          ? html`<p class="muted">Waiting for the first snapshot…</p>`
          : snap.queues.length === 0
            ? html`<${Empty}>No queues yet. Create one on the Queues page.<//>`
            : html`<${CountsTable}
              label="Every queue and subscription, counts by state"
              queues=${snap.queues}
              subscriptions=${snap.subscriptions}
            />`
      }
    <//>
  </div>`;
}
