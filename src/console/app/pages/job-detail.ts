import { html } from "htm/preact";
import { DEFAULT_RESULT_TTL_MS, PROP_METADATA, PROP_NOTES } from "../../../contract/job-status.js";
import { JobError, parseJobError } from "../components/job-error.js";
import { JobLog } from "../components/job-log.js";
import { BodyView, headerFacts, PropertiesTable } from "../components/message.js";
import { Badge, Card, Facts, stateTone } from "../components/ui.js";
import { access } from "../lib/access.js";
import { attempt, confirmAction } from "../lib/feedback.js";
import { dateTime, duration, prettyJson } from "../lib/format.js";
import { live } from "../lib/live.js";
import { href } from "../lib/router.js";
import { api } from "../lib/session.js";
import { useStore } from "../lib/store.js";
import { useAsync } from "../lib/use-async.js";
import { jobStatus } from "./jobs.js";

const FINAL = new Set(["complete", "dead", "cancelled"]);

/** One line for the timeline: the error's type and message, without its stack. */
function errorLine(text: string): string {
  const e = parseJobError(text);
  return e.type ? `${e.type}: ${e.message}` : e.message;
}

export function JobDetail(props: { id: string }) {
  const seq = Number(props.id);
  const state = useStore(live);
  const { manage } = useStore(access);
  const tick = state.snapshot?.at_ms ?? 0;
  const job = useAsync(async () => {
    const [rec] = (await api().call("getMessages", { seq_numbers: [seq] })).messages;
    const errors = rec ? (await api().call("messageErrors", { seq_number: seq })).errors : [];
    return rec ? { rec, errors } : undefined;
  }, [seq, Math.floor(tick / 1000)]);
  const data = job.data;

  if (!data)
    return html`<div class="page">
      <p class="crumbs"><a href=${href("jobs")}>Jobs</a> /</p>
      <h1>Job #${props.id}</h1>
      ${job.loading ? html`<p class="muted">Loading…</p>` : html`<p class="alert error" role="alert">${job.error ?? "No such job."}</p>`}
    </div>`;

  const { rec, errors } = data;
  const status = jobStatus(rec);
  const notes = rec.properties?.[PROP_NOTES];
  const metadata = rec.properties?.[PROP_METADATA];
  const others = Object.fromEntries(
    Object.entries(rec.properties ?? {}).filter(([k]) => k !== PROP_NOTES && k !== PROP_METADATA),
  );

  const retry = async () => {
    const ok = await confirmAction({
      title: `Retry job #${seq}?`,
      message: "The dead job goes back to its queue with a fresh retry budget (same id, notes and metadata).",
      confirm: "Retry",
    });
    if (
      ok &&
      (await attempt(
        () => api().call("redrive", { queue: rec.queue!, seq_numbers: [seq] }),
        `Job #${seq} is pending again`,
      ))
    )
      void job.reload();
  };
  const cancel = async () => {
    const ok = await confirmAction({
      title: `Cancel job #${seq}?`,
      message:
        status === "running"
          ? "The job is running: its worker is asked to stop (it sees the request at its next lease renewal)."
          : "The job will never run.",
      confirm: "Cancel job",
      danger: true,
    });
    if (!ok) return;
    await attempt(
      async () => {
        // Kept like a job cancelled from the job face (its default resultTtlMs), not swept at once.
        const r = await api().call("cancelMessage", {
          queue: rec.queue!,
          seq_number: seq,
          retain_ms: DEFAULT_RESULT_TTL_MS,
        });
        if (r.outcome === "none") throw new Error("The job had already finished.");
      },
      status === "running" ? "Cancel requested" : `Job #${seq} cancelled`,
    );
    void job.reload();
  };

  const timeline: [string, number | undefined, string?][] = [
    ["Created", rec.enqueued_at_ms ?? undefined],
    ...(rec.visible_at_ms && rec.visible_at_ms > (rec.enqueued_at_ms ?? 0) + 5 && !rec.delivered_at_ms
      ? [["Scheduled for", rec.visible_at_ms] as [string, number]]
      : []),
    ...errors.map(
      (e) => [`Attempt ${e.attempt} failed`, e.failed_at_ms, errorLine(e.error)] as [string, number, string],
    ),
    [
      "Started",
      rec.delivered_at_ms ?? undefined,
      rec.delivery_count && rec.delivery_count > 1 ? `attempt ${rec.delivery_count}` : undefined,
    ],
    [
      status === "complete"
        ? "Completed"
        : status === "dead"
          ? "Dead"
          : status === "cancelled"
            ? "Cancelled"
            : "Settled",
      rec.settled_at_ms ?? undefined,
    ],
  ];
  timeline.sort((a, b) => (a[1] ?? Number.MAX_SAFE_INTEGER) - (b[1] ?? Number.MAX_SAFE_INTEGER));

  return html`<div class="page">
    <header class="page-head">
      <div>
        <p class="crumbs"><a href=${href("jobs")}>Jobs</a> /</p>
        <h1>Job #${seq} <${Badge} tone=${stateTone(status)}>${status}<//></h1>
        <p class="muted">${rec.subject || "(no task)"} on <a href=${href("queues", rec.queue ?? "")}>${rec.queue}</a></p>
      </div>
      <div class="actions">
        ${manage && status === "dead" && html`<button type="button" class="primary" onClick=${retry}>Retry</button>`}
        ${manage && !FINAL.has(status) && html`<button type="button" class="danger" onClick=${cancel}>Cancel</button>`}
      </div>
    </header>
    <div class="grid two">
      <${Card} title="Job">
        <${Facts}
          label="Job fields"
          items=${[
            ["Task", rec.subject ?? ""],
            ["Status", status],
            ["Priority", String(rec.priority ?? 0)],
            ["Attempts", `${rec.delivery_count ?? 0} of ${rec.max_delivery_count || "the queue's limit"}`],
            ...(rec.progress !== undefined && rec.progress !== null
              ? [
                  [
                    "Progress",
                    html`<span class="job-progress" data-testid="job-progress"
                      ><progress max="100" value=${rec.progress} aria-label="Progress">${rec.progress}%</progress>
                      <span class="pct">${rec.progress}%</span></span
                    >`,
                  ] as [string, unknown],
                ]
              : []),
            ...(rec.unique_key ? [["Unique key", rec.unique_key] as [string, unknown]] : []),
            ...(rec.cancel_requested ? [["Cancel", "requested"] as [string, unknown]] : []),
            ...(rec.settled_at_ms && rec.delivered_at_ms
              ? [["Ran for", duration(rec.settled_at_ms - rec.delivered_at_ms)] as [string, unknown]]
              : []),
          ]}
        />
        <h3>Notes</h3>
        ${notes ? html`<pre class="code" data-testid="notes">${prettyJson(notes) ?? notes}</pre>` : html`<p class="muted">None.</p>`}
        <h3>Metadata</h3>
        ${metadata ? html`<pre class="code">${metadata}</pre>` : html`<p class="muted">None.</p>`}
        ${Object.keys(others).length > 0 && html`<h3>Other properties</h3><${PropertiesTable} properties=${others} />`}
      <//>
      <${Card} title="Timeline">
        <ol class="timeline">
          ${timeline.map(
            ([what, at, detail]) => html`<li class=${at ? "done" : "todo"}>
              <span class="when">${at ? dateTime(at) : "—"}</span>
              <span class="what">${what}</span>
              ${detail && html`<span class="detail">${detail}</span>`}
            </li>`,
          )}
        </ol>
      <//>
    </div>
    <div class="grid two">
      <${Card} title="Arguments"><${BodyView} body=${rec.body} label="Arguments" /><//>
      <${Card} title="Result">
        ${
          rec.result !== undefined && rec.result !== null
            ? html`<${BodyView} body=${rec.result} label="Result" />`
            : html`<p class="muted">${status === "complete" ? "No result kept." : "Not finished."}</p>`
        }
      <//>
    </div>
    <${JobLog} seq=${seq} running=${!FINAL.has(status)} tick=${tick} />
    <${Card} title=${`Errors (${errors.length})`}>
      ${
        errors.length === 0
          ? html`<p class="muted">No failed attempt.</p>`
          : html`<ol class="errors" data-testid="job-errors">
            ${errors.map(
              (e) => html`<li key=${e.attempt}>
                <p><strong>Attempt ${e.attempt}</strong> <span class="muted">· ${dateTime(e.failed_at_ms)}</span></p>
                <${JobError} text=${e.error} />
              </li>`,
            )}
          </ol>`
      }
    <//>
    <${Card} title="Message">
      <${Facts} label="Message headers" items=${headerFacts(rec)} />
    <//>
  </div>`;
}
