import { html } from "htm/preact";
import { useEffect, useRef, useState } from "preact/hooks";
import type { JobStatus } from "../../../contract/job-status.js";
import { PROP_METADATA, PROP_NOTES, statesOf, statusOf } from "../../../contract/job-status.js";
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
import { count, dateTime } from "../lib/format.js";
import { useJobQueues } from "../lib/job-queues.js";
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

/** The jobs list's filters, kept in the address (`#/jobs?status=dead&queue=mail`). */
function filtersOf(q: URLSearchParams) {
  return {
    status: q.get("status") ?? "",
    queue: q.get("queue") ?? "",
    task: q.get("task") ?? "",
    search: q.get("q") ?? "",
  };
}

function jobsHash(f: ReturnType<typeof filtersOf>): string {
  const params = new URLSearchParams();
  if (f.status) params.set("status", f.status);
  if (f.queue) params.set("queue", f.queue);
  if (f.task) params.set("task", f.task);
  if (f.search) params.set("q", f.search);
  return `#/jobs${params.size ? `?${params}` : ""}`;
}

export function Jobs(props: { route: Route }) {
  const state = useStore(live);
  // The address is the filters' one source: a link or a typed `?status=` changes the list.
  const filters = filtersOf(props.route.query);
  const { status, queue } = filters;
  const [task, setTask] = useState(filters.task);
  const [search, setSearch] = useState(filters.search);
  useEffect(() => setTask(filters.task), [filters.task]);
  useEffect(() => setSearch(filters.search), [filters.search]);
  const taskD = useDebounced(task, 300);
  const searchD = useDebounced(search, 300);
  const setFilters = (change: Partial<ReturnType<typeof filtersOf>>) =>
    navigate(jobsHash({ ...filters, ...change }));
  useEffect(() => {
    if (taskD !== filters.task || searchD !== filters.search) setFilters({ task: taskD, search: searchD });
  }, [taskD, searchD]);

  const [offset, setOffset] = useState(0);
  useEffect(() => setOffset(0), [status, queue, filters.task, filters.search]);
  const [jobs, setJobs] = useState<Msg[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  const workers = useAsync(
    () => api().call("listWorkers"),
    [Math.floor((state.snapshot?.at_ms ?? 0) / 5000)],
  );
  const jobQueueNames = useJobQueues(
    state.snapshot?.queues,
    workers.data ? workers.data.workers.flatMap((w) => w.queues ?? []) : workers.error ? [] : undefined,
  );
  const jobQueues = (state.snapshot?.queues ?? []).filter((x) => jobQueueNames?.includes(x.name));
  const scope = queue ? jobQueues.filter((x) => x.name === queue) : jobQueues;
  const signature = scope
    .map((x) => `${x.name}:${x.total}:${x.locked}:${x.completed}:${x.dead_lettered}:${x.backing_off}`)
    .join("|");
  const generation = useRef(0);

  useEffect(() => {
    if (!jobQueueNames) return;
    const mine = ++generation.current;
    const names = queue ? [queue] : jobQueueNames;
    if (names.length === 0) {
      setJobs([]);
      return;
    }
    const filter = status ? statesOf(status as JobStatus) : undefined;
    const needle = filters.search.trim().toLowerCase();
    api()
      .call("browse", {
        queues: names,
        ...(filter && { states: filter.states }),
        ...(filter?.backingOff !== undefined && { backing_off: filter.backingOff }),
        ...(filters.task.trim() && { subject: filters.task.trim() }),
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
  }, [status, queue, filters.task, filters.search, offset, signature, jobQueueNames?.join("|"), state.epoch]);

  const totals = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>;
  for (const x of scope) {
    const c = jobCounts(x);
    for (const s of STATUSES) totals[s] += c[s];
  }
  const tasks = [...new Set((jobs ?? []).map((m) => m.subject ?? "").filter(Boolean))].sort();

  return html`<div class="page">
    <header class="page-head">
      <h1>Jobs</h1>
      <div class="actions">
        <a class="button ghost" href=${href("workers")}>Workers</a>
        <a class="button ghost" href=${href("periodic")}>Periodic jobs</a>
      </div>
    </header>
    <div class="status-strip" role="list" aria-label="Jobs by status">
      ${STATUSES.map(
        (s) => html`<button
          type="button"
          role="listitem"
          key=${s}
          class=${`status-pill tone-${stateTone(s)}${status === s ? " selected" : ""}`}
          aria-pressed=${status === s ? "true" : "false"}
          onClick=${() => setFilters({ status: status === s ? "" : s })}
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
          onChange=${(v: string) => setFilters({ status: v })}
          options=${[["", "any"], ...STATUSES.map((s) => [s, s] as [string, string])]}
        />
        <${SelectField}
          label="Queue"
          name="queue"
          value=${queue}
          onChange=${(v: string) => setFilters({ queue: v })}
          options=${[["", "every job queue"], ...jobQueues.map((x) => [x.name, x.name] as [string, string])]}
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
            ? html`<${Empty}>${jobQueueNames?.length === 0 ? "No job queue yet: enqueue a job or start a worker." : "No jobs match."}<//>`
            : html`<${TableWrap} label="Jobs">
              <table class="data jobs stack">
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
                      <th scope="row" data-label="Job"><a href=${href("jobs", m.seq_number ?? "")}>#${m.seq_number}</a></th>
                      <td data-label="Task">${m.subject ?? ""}</td>
                      <td data-label="Queue">${m.queue ?? ""}</td>
                      <td data-label="Status"><${Badge} tone=${stateTone(st)}>${st}<//></td>
                      <td class="num" data-label="Attempts">${m.delivery_count ?? 0}</td>
                      <td data-label="Created">${dateTime(m.enqueued_at_ms)}</td>
                      <td data-label="Finished">${dateTime(m.settled_at_ms)}</td>
                      <td class="ellipsis" data-label="Notes">${m.properties?.[PROP_NOTES] ?? ""}</td>
                    </tr>`;
                  })}
                </tbody>
              </table>
            <//>`
      }
      ${
        !filters.search &&
        html`<div class="pager">
        <button type="button" class="ghost" disabled=${offset === 0} onClick=${() => setOffset(Math.max(0, offset - PAGE))}>Newer</button>
        <button type="button" class="ghost" disabled=${(jobs?.length ?? 0) < PAGE} onClick=${() => setOffset(offset + PAGE)}>Older</button>
      </div>`
      }
    <//>
  </div>`;
}

export const openJob = (seq: number) => navigate(href("jobs", seq));
