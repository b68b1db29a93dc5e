import { html } from "htm/preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import type { ResponseOf } from "../../../wire/routes.js";
import { FilterEditor, type FilterResult } from "../components/filter-editor.js";
import { type Draft, DraftFields, draftToWire } from "../components/send-form.js";
import { Badge, Card, Empty, Modal, TableWrap, TextField, useDebounced } from "../components/ui.js";
import { access } from "../lib/access.js";
import { attempt, confirmAction, notify } from "../lib/feedback.js";
import { configDuration, count, relative } from "../lib/format.js";
import { live, type QueueSnapshot, type SubscriptionSnapshot } from "../lib/live.js";
import { href } from "../lib/router.js";
import { api } from "../lib/session.js";
import { useStore } from "../lib/store.js";
import { useAsync } from "../lib/use-async.js";

const SAMPLE: Draft = {
  body: '{"amount": 250, "currency": "EUR"}',
  subject: "orders.eu.created",
  contentType: "application/json",
  properties: "tier=gold\nregion=eu",
  messageId: "",
  groupId: "",
  correlationId: "",
  replyTo: "",
};

const key = (s: { topic: string; name: string }) => `${s.topic}\u0000${s.name}`;

/** The sample as a wire message, or undefined while a property line is malformed. */
function sampleWire(d: Draft): object | undefined {
  try {
    return draftToWire(d);
  } catch {
    return undefined;
  }
}

/** TestFilter of every filtered subscription against the sample (debounced). */
function useDryRun(subs: SubscriptionSnapshot[], sample: object | undefined): Map<string, FilterResult> {
  const settled = useDebounced(
    JSON.stringify([subs.map((s) => [s.topic, s.name, s.expr ?? ""]), sample ?? null]),
    300,
  );
  const [results, setResults] = useState(new Map<string, FilterResult>());
  useEffect(() => {
    const [list, message] = JSON.parse(settled) as [[string, string, string][], object | null];
    if (!message) return;
    let stale = false;
    void Promise.all(
      list.map(async ([topic, name, expr]) => {
        const r: FilterResult = expr
          ? await api()
              .call("testFilter", { expr, message })
              .catch((err: Error) => ({ valid: false, error: err.message, ran: false, matched: false }))
          : { valid: true, ran: true, matched: true };
        return [key({ topic, name }), r] as const;
      }),
    ).then((entries) => !stale && setResults(new Map(entries)));
    return () => {
      stale = true;
    };
  }, [settled]);
  return results;
}

type TaskBacklog = ResponseOf<"topicStats">["subscriptions"][number];
type LogStat = ResponseOf<"topicLogStats">["subscriptions"][number];

/** Task subscriptions' backlogs and log subscriptions' cursors and lag, per topic (every 3 s). */
function useJobTopicStats(subs: SubscriptionSnapshot[], at: number) {
  const topics = [...new Set(subs.filter((s) => s.kind !== "queue").map((s) => s.topic))].sort();
  const tick = Math.floor(at / 3000);
  const stats = useAsync(async () => {
    const tasks = new Map<string, TaskBacklog>();
    const logs = new Map<string, LogStat>();
    await Promise.all(
      topics.map(async (topic) => {
        const [t, l] = await Promise.all([
          api().call("topicStats", { topic }),
          api().call("topicLogStats", { topic }),
        ]);
        for (const x of t.subscriptions) tasks.set(key({ topic, name: x.subscription }), x);
        for (const x of l.subscriptions) logs.set(key({ topic, name: x.subscription }), x);
      }),
    );
    return { tasks, logs };
  }, [topics.join("\u0000"), tick]);
  return stats.data ?? { tasks: new Map<string, TaskBacklog>(), logs: new Map<string, LogStat>() };
}

function Verdict(props: { sub: SubscriptionSnapshot; result: FilterResult | undefined }) {
  const r = props.result;
  if (!r) return html`<span class="muted">…</span>`;
  if (!r.valid) return html`<span class="verdict bad">✕ invalid</span>`;
  if (!r.matched) return html`<span class="verdict warn" title=${r.error ?? ""}>✕ filtered out</span>`;
  if (props.sub.paused) return html`<span class="verdict warn">✕ paused</span>`;
  return html`<span class="verdict good">✓ would route</span>`;
}

function SubscriptionRow(props: {
  sub: SubscriptionSnapshot;
  queue: QueueSnapshot | undefined;
  task: TaskBacklog | undefined;
  log: LogStat | undefined;
  result: FilterResult | undefined;
  onEdit: () => void;
}) {
  const { sub, queue: q, task, log } = props;
  const backlog = q
    ? count(q.active + q.locked + q.deferred + q.scheduled)
    : task
      ? `${count(task.pending + task.running)}`
      : log
        ? `lag ${count(log.lag)}`
        : "—";
  const dead = q ? count(q.dead_lettered) : task ? count(task.dead) : "—";
  const toggle = () =>
    attempt(
      () =>
        api().call(sub.paused ? "resumeSubscription" : "pauseSubscription", {
          topic: sub.topic,
          name: sub.name,
        }),
      `${sub.paused ? "Resumed" : "Paused"} ${sub.name}`,
    );
  const unsubscribe = async () => {
    const ok = await confirmAction({
      title: `Unsubscribe ${sub.name}?`,
      message: `The subscription ${sub.name} of ${sub.topic} is removed${sub.kind === "queue" ? ", with its backing queue and every message in it" : ""}.`,
      confirm: "Unsubscribe",
      danger: true,
    });
    if (ok)
      await attempt(
        () => api().call("unsubscribe", { topic: sub.topic, name: sub.name }),
        `Unsubscribed ${sub.name}`,
      );
  };
  return html`<tr data-sub=${sub.name}>
    <th scope="row">
      ${sub.kind === "queue" ? html`<a href=${href("queues", sub.name)}>${sub.name}</a>` : sub.name}
      ${
        task &&
        html`<div class="sub-detail">
        task <a href=${`#/jobs?task=${encodeURIComponent(task.task)}&queue=${encodeURIComponent(task.queue)}`}>${task.task}</a>${` on ${task.queue}`}
      </div>`
      }
      ${
        log &&
        html`<div class="sub-detail">
        cursor ${log.cursor ?? "at the start"}${log.oldest_unacked_at_ms ? ` · oldest unacked ${relative(log.oldest_unacked_at_ms)}` : ""}
      </div>`
      }
    </th>
    <td data-label="Kind">
      <${Badge} tone="muted">${sub.kind}<//>
      ${task && html` <${Badge} tone=${task.durable ? "info" : "warn"}>${task.durable ? "durable" : "ephemeral"}<//>`}
    </td>
    <td class="mono filter-cell" data-label="Filter">${sub.expr ?? html`<span class="muted">match all</span>`}</td>
    <td data-label="State">${sub.paused ? html`<${Badge} tone="warn">paused<//>` : html`<${Badge} tone="ok">active<//>`}</td>
    <td class="num" data-testid="backlog" data-label="Backlog">${backlog}</td>
    <td class="num" data-label="Dead">${dead}</td>
    <td data-testid="dry-run" data-label="Sample"><${Verdict} sub=${sub} result=${props.result} /></td>
    <td><div class="row-actions">
      ${
        access.get().manage &&
        html`<button type="button" class="small" onClick=${toggle}>${sub.paused ? "Resume" : "Pause"}</button>
      ${sub.kind === "queue" && html`<button type="button" class="small" onClick=${props.onEdit}>Edit filter</button>`}
      <button type="button" class="small danger-text" onClick=${unsubscribe}>Unsubscribe</button>`
      }
    </div></td>
  </tr>`;
}

function SubscriptionForm(props: {
  existing?: SubscriptionSnapshot;
  topics: string[];
  sample: object | undefined;
  onDone: () => void;
}) {
  const e = props.existing;
  const [topic, setTopic] = useState(e?.topic ?? "");
  const [name, setName] = useState(e?.name ?? "");
  const [expr, setExpr] = useState(e?.expr ?? "");
  const [busy, setBusy] = useState(false);
  const submit = async (ev: Event) => {
    ev.preventDefault();
    setBusy(true);
    const ok = await attempt(
      () =>
        api().call("subscribe", {
          topic: topic.trim(),
          name: name.trim(),
          ...(expr.trim() && { filter: { expr: expr.trim() } }),
        }),
      e ? `Saved the filter of ${name}` : `Subscribed ${name} to ${topic}`,
    );
    setBusy(false);
    if (ok) props.onDone();
  };
  return html`<form class="form" onSubmit=${submit} aria-label=${e ? "Edit filter" : "New subscription"}>
    ${
      e
        ? html`<p>Subscription <strong>${e.name}</strong> of <strong>${e.topic}</strong>.</p>`
        : html`<div class="form-grid">
          <${TextField} label="Topic" name="topic" value=${topic} onInput=${setTopic} required=${true} list="topic-names" />
          <${TextField} label="Subscription name" name="sub_name" value=${name} onInput=${setName} required=${true} hint="Becomes its backing queue" />
          <datalist id="topic-names">${props.topics.map((t) => html`<option value=${t} />`)}</datalist>
        </div>`
    }
    <${FilterEditor} value=${expr} onInput=${setExpr} sample=${props.sample} />
    <div class="form-actions">
      <button type="submit" class="primary" disabled=${busy}>${e ? "Save filter" : "Subscribe"}</button>
    </div>
  </form>`;
}

export function Topics() {
  const state = useStore(live);
  const snap = state.snapshot;
  const [sample, setSample] = useState<Draft>(SAMPLE);
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<SubscriptionSnapshot | undefined>();
  const subs = snap?.subscriptions ?? [];
  const wire = useMemo(() => sampleWire(sample), [sample]);
  const results = useDryRun(subs, wire);
  const jobStats = useJobTopicStats(subs, snap?.at_ms ?? 0);
  const declared = useAsync(() => api().call("listDeclaredTopics"), [subs.length]);
  const declaredByName = new Map((declared.data?.topics ?? []).map((t) => [t.name, t]));
  const byTopic = new Map<string, SubscriptionSnapshot[]>();
  for (const t of declaredByName.keys()) byTopic.set(t, []);
  for (const s of subs) byTopic.set(s.topic, [...(byTopic.get(s.topic) ?? []), s]);
  const queues = new Map((snap?.queues ?? []).map((q) => [q.name, q]));

  const publish = async (topic: string) => {
    if (!wire) return notify("The sample has a malformed property line", "error");
    await attempt(async () => {
      const r = await api().call("send", { queue: topic, messages: [wire] });
      const seq = r.seq_numbers?.[0] ?? 0;
      notify(
        seq ? `Published to ${topic}: seq ${seq}` : `Published to ${topic}: no subscription took it`,
        seq ? "ok" : "info",
      );
    });
  };

  return html`<div class="page">
    <header class="page-head">
      <h1>Topics</h1>
      <div class="actions">
        ${access.get().manage && html`<button type="button" class="primary" onClick=${() => setCreating(true)}>New subscription</button>`}
      </div>
    </header>
    <div class="topics-layout">
      <div class="topics-list">
        ${
          !snap
            ? html`<p class="muted">Waiting for the first snapshot…</p>`
            : byTopic.size === 0
              ? html`<${Card}><${Empty}>No topics yet. A topic appears once it has a subscription: create one.<//><//>`
              : [...byTopic].map(([topic, list]) => {
                  const routed = list.filter((s) => {
                    const r = results.get(key(s));
                    return r?.valid && r.matched && !s.paused;
                  });
                  const known = list.every((s) => results.has(key(s)));
                  // A declared topic keeps every publish in its log, so nothing is dropped there.
                  const dropped = wire && known && routed.length === 0 && !declaredByName.has(topic);
                  return html`<${Card}
                  key=${topic}
                  class="topic"
                  title=${html`${topic} ${dropped && html`<${Badge} tone="danger" title="No subscription would take the sample">message is dropped<//>`}`}
                  actions=${access.get().manage && html`<button type="button" class="small" onClick=${() => publish(topic)}>Publish sample</button>`}
                >
<p class="muted">
                    ${list.length} subscription${list.length === 1 ? "" : "s"}${wire && known ? ` · the sample goes to ${routed.length}` : ""}
                    ${
                      declaredByName.has(topic) &&
                      html` · <${Badge} tone="info">declared<//> log kept ${configDuration(declaredByName.get(topic)?.retention_ms, "until consumed")}`
                    }
                  </p>
                  <${TableWrap} label=${`Subscriptions of ${topic}`}>
                    <table class="data subs stack" data-topic=${topic}>
                      <thead>
                        <tr>
                          <th scope="col">Subscription</th>
                          <th scope="col">Kind</th>
                          <th scope="col">Filter</th>
                          <th scope="col">State</th>
                          <th scope="col" class="num">Backlog</th>
                          <th scope="col" class="num">Dead</th>
                          <th scope="col">Sample</th>
                          <th scope="col"><span class="sr-only">Actions</span></th>
                        </tr>
                      </thead>
                      <tbody>
                        ${list.map(
                          (s) => html`<${SubscriptionRow}
                            key=${s.name}
                            sub=${s}
                            queue=${s.kind === "queue" ? queues.get(s.name) : undefined}
                            task=${jobStats.tasks.get(key(s))}
                            log=${jobStats.logs.get(key(s))}
                            result=${results.get(key(s))}
                            onEdit=${() => setEditing(s)}
                          />`,
                        )}
                      </tbody>
                    </table>
                  <//>
                <//>`;
                })
        }
      </div>
      <${Card} title="Dry run" class="sample">
        <p class="muted">Every filter is run on this sample as you edit it (nothing is sent).</p>
        <${DraftFields} draft=${sample} onChange=${setSample} />
        ${!wire && html`<p class="alert error" role="alert">A property line is not key=value.</p>`}
      <//>
    </div>
    <${Modal} open=${creating} title="New subscription" onClose=${() => setCreating(false)} wide=${true}>
      ${
        creating &&
        html`<${SubscriptionForm} topics=${[...byTopic.keys()]} sample=${wire} onDone=${() => setCreating(false)} />`
      }
    <//>
    <${Modal} open=${!!editing} title="Edit filter" onClose=${() => setEditing(undefined)} wide=${true}>
      ${
        editing &&
        html`<${SubscriptionForm} existing=${editing} topics=${[]} sample=${wire} onDone=${() => setEditing(undefined)} />`
      }
    <//>
  </div>`;
}
