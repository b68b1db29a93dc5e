import { html } from "htm/preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { PROP_METADATA, PROP_NOTES, statesOf, statusOf } from "../../../jobs/job-record.js";
import type { JobStatus } from "../../../jobs/types.js";
import type { Msg } from "../components/message.js";
import {
  Badge,
  Card,
  Empty,
  SelectField,
  stateTone,
  TableWrap,
  TextField,
  useDebounced,
} from "../components/ui.js";
import { count, dateTime, duration, relative } from "../lib/format.js";
import { live, type QueueSnapshot } from "../lib/live.js";
import { href, navigate, type Route } from "../lib/router.js";
import { api } from "../lib/session.js";
import { useStore } from "../lib/store.js";
import { useAsync } from "../lib/use-async.js";

export const STATUSES: JobStatus[] = ["pending", "running", "failed", "complete", "dead", "cancelled"];

/** A job's status counts from a queue's counts (as the job face's stats). */
export function jobCounts(q: QueueSnapshot): Record<JobStatus, number> {
  return {
    pending: q.active + q.deferred + q.scheduled - q.backing_off,
    running: q.locked,
    failed: q.backing_off,
    complete: q.completed,
    dead: q.dead_lettered,
    cancelled: q.cancelled,
  };
}

export const jobStatus = (m: Msg) => statusOf(m.state as never, m.delivery_count ?? 0);

const PAGE = 100;

function Workers() {
  const state = useStore(live);
  const tick = Math.floor((state.snapshot?.at_ms ?? 0) / 5000);
  const workers = useAsync(() => api().call("listWorkers"), [tick]);
  const list = workers.data?.workers ?? [];
  const now = state.snapshot?.at_ms ?? Date.now();
  return html`<${Card} title="Workers">
    ${workers.error && html`<p class="alert error" role="alert">${workers.error}</p>`}
    ${
      list.length === 0
        ? html`<${Empty}>No worker has sent a heartbeat.<//>`
        : html`<${TableWrap} label="Every registered worker">
          <table class="data workers">
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
                return html`<tr key=${w.worker_id}>
                  <th scope="row" class="mono">${w.worker_id}</th>
                  <td><${Badge} tone=${w.status === "active" ? "ok" : "warn"}>${w.status}<//></td>
                  <td>${(w.queues ?? []).join(", ")}</td>
                  <td>${w.hostname ?? ""}</td>
                  <td class="num">${w.pid ?? ""}</td>
                  <td class="num">${w.concurrency ?? ""}</td>
                  <td>${relative(w.started_at_ms, now)}</td>
                  <td>
                    ${relative(w.last_heartbeat_ms, now)}
                    ${age > 30_000 && html` <${Badge} tone="danger" title="No heartbeat for ${duration(age)}">stale<//>`}
                  </td>
                </tr>`;
              })}
            </tbody>
          </table>
        <//>`
    }
  <//>`;
}

export function Jobs(props: { route: Route }) {
  const q = props.route.query;
  const state = useStore(live);
  const [status, setStatus] = useState(q.get("status") ?? "");
  const [queue, setQueue] = useState(q.get("queue") ?? "");
  const [task, setTask] = useState(q.get("task") ?? "");
  const [search, setSearch] = useState(q.get("q") ?? "");
  const [offset, setOffset] = useState(0);
  const [jobs, setJobs] = useState<Msg[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const taskD = useDebounced(task, 300);
  const searchD = useDebounced(search, 300);
  const plain = (state.snapshot?.queues ?? []).filter((x) => x.kind === "queue");
  const scope = queue ? plain.filter((x) => x.name === queue) : plain;
  const signature = scope
    .map((x) => `${x.name}:${x.total}:${x.locked}:${x.completed}:${x.dead_lettered}:${x.backing_off}`)
    .join("|");
  const generation = useRef(0);

  useEffect(() => {
    const params = new URLSearchParams();
    if (status) params.set("status", status);
    if (queue) params.set("queue", queue);
    if (taskD) params.set("task", taskD);
    if (searchD) params.set("q", searchD);
    const next = `#/jobs${params.size ? `?${params}` : ""}`;
    if (location.hash !== next) history.replaceState(null, "", next);
  }, [status, queue, taskD, searchD]);

  useEffect(() => {
    if (!state.snapshot) return;
    const mine = ++generation.current;
    const filter = status ? statesOf(status as JobStatus) : undefined;
    const needle = searchD.trim().toLowerCase();
    api()
      .call("browse", {
        queues: queue ? [queue] : plain.map((x) => x.name),
        ...(filter && { states: filter.states }),
        ...(filter?.backingOff !== undefined && { backing_off: filter.backingOff }),
        ...(taskD.trim() && { subject: taskD.trim() }),
        limit: needle ? 1000 : PAGE,
        offset: needle ? 0 : offset,
      })
      .then(
        (r) => {
          if (mine !== generation.current) return;
          const found = needle
            ? r.messages.filter((m) =>
                [m.properties?.[PROP_NOTES], m.properties?.[PROP_METADATA]].some((v) =>
                  v?.toLowerCase().includes(needle),
                ),
              )
            : r.messages;
          setJobs(found);
          setError(undefined);
        },
        (err: Error) => mine === generation.current && setError(err.message),
      );
  }, [status, queue, taskD, searchD, offset, signature, !!state.snapshot]);

  const totals = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>;
  for (const x of scope) {
    const c = jobCounts(x);
    for (const s of STATUSES) totals[s] += c[s];
  }
  const tasks = [...new Set((jobs ?? []).map((m) => m.subject ?? "").filter(Boolean))].sort();

  return html`<div class="page">
    <header class="page-head"><h1>Jobs</h1></header>
    <div class="status-strip" role="list" aria-label="Jobs by status">
      ${STATUSES.map(
        (s) => html`<button
          type="button"
          role="listitem"
          key=${s}
          class=${`status-pill tone-${stateTone(s)}${status === s ? " selected" : ""}`}
          aria-pressed=${status === s ? "true" : "false"}
          onClick=${() => {
            setStatus(status === s ? "" : s);
            setOffset(0);
          }}
        >
          <span class="total-n" data-job-status=${s}>${count(totals[s])}</span>
          <span>${s}</span>
        </button>`,
      )}
    </div>
    <${Card}>
      <form class="toolbar" role="search" aria-label="Filter jobs" onSubmit=${(e: Event) => e.preventDefault()}>
        <${SelectField}
          label="Status"
          name="status"
          value=${status}
          onChange=${(v: string) => {
            setStatus(v);
            setOffset(0);
          }}
          options=${[["", "any"], ...STATUSES.map((s) => [s, s] as [string, string])]}
        />
        <${SelectField}
          label="Queue"
          name="queue"
          value=${queue}
          onChange=${(v: string) => {
            setQueue(v);
            setOffset(0);
          }}
          options=${[["", "every queue"], ...plain.map((x) => [x.name, x.name] as [string, string])]}
        />
        <${TextField} label="Task" name="task" value=${task} onInput=${setTask} list="task-names" placeholder="any task" />
        <datalist id="task-names">${tasks.map((t) => html`<option value=${t} />`)}</datalist>
        <${TextField} label="Search notes and metadata" name="q" type="search" value=${search} onInput=${setSearch} />
      </form>
      ${error && html`<p class="alert error" role="alert">${error}</p>`}
      ${
        !jobs
          ? html`<p class="muted">Loading…</p>`
          : jobs.length === 0
            ? html`<${Empty}>No jobs match.<//>`
            : html`<${TableWrap} label="Jobs">
              <table class="data jobs">
                <thead>
                  <tr>
                    <th scope="col">Job</th>
                    <th scope="col">Task</th>
                    <th scope="col">Queue</th>
                    <th scope="col">Status</th>
                    <th scope="col" class="num">Attempts</th>
                    <th scope="col">Created</th>
                    <th scope="col">Finished</th>
                    <th scope="col">Notes</th>
                  </tr>
                </thead>
                <tbody>
                  ${jobs.map((m) => {
                    const st = jobStatus(m);
                    return html`<tr key=${m.seq_number} data-job=${m.seq_number} data-status=${st}>
                      <th scope="row"><a href=${href("jobs", m.seq_number ?? "")}>#${m.seq_number}</a></th>
                      <td>${m.subject ?? ""}</td>
                      <td>${m.queue ?? ""}</td>
                      <td><${Badge} tone=${stateTone(st)}>${st}<//></td>
                      <td class="num">${m.delivery_count ?? 0}</td>
                      <td>${dateTime(m.enqueued_at_ms)}</td>
                      <td>${dateTime(m.settled_at_ms)}</td>
                      <td class="ellipsis">${m.properties?.[PROP_NOTES] ?? ""}</td>
                    </tr>`;
                  })}
                </tbody>
              </table>
            <//>`
      }
      ${
        !searchD &&
        html`<div class="pager">
        <button type="button" class="ghost" disabled=${offset === 0} onClick=${() => setOffset(Math.max(0, offset - PAGE))}>Newer</button>
        <button type="button" class="ghost" disabled=${(jobs?.length ?? 0) < PAGE} onClick=${() => setOffset(offset + PAGE)}>Older</button>
      </div>`
      }
    <//>
    <${Workers} />
  </div>`;
}

export const openJob = (seq: number) => navigate(href("jobs", seq));
