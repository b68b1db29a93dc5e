import { html } from "htm/preact";
import {
  Arrow,
  Box,
  curve,
  Diagram,
  type TopoData,
  TopologyDiagram,
  targetOf,
} from "../components/topology.js";
import { Badge, Card, Empty, TableWrap } from "../components/ui.js";
import { count } from "../lib/format.js";
import { type ConsoleSnapshot, live } from "../lib/live.js";
import { href } from "../lib/router.js";
import { api } from "../lib/session.js";
import { useStore } from "../lib/store.js";
import { useAsync } from "../lib/use-async.js";

/**
 * The map as the RPCs give it: used until the live feed's first snapshot, and for what the feed
 * does not carry (declared topics, a task subscription's job queue).
 */
async function loadTopology(): Promise<TopoData> {
  const a = api();
  const [queues, subs, declared] = await Promise.all([
    a.call("listQueues"),
    a.call("listSubscriptions"),
    a.call("listDeclaredTopics"),
  ]);
  // A queue deleted between the listing and its Stats stays on the map, without counts.
  const stats = await Promise.all(
    queues.queues.map((q) => a.call("stats", { queue: q.name }).catch(() => undefined)),
  );
  const topics = new Set([...declared.topics.map((t) => t.name), ...subs.subscriptions.map((s) => s.topic)]);
  return {
    topics: [...topics].sort(),
    subs: subs.subscriptions,
    queues: queues.queues.map((q, i) => ({
      name: q.name,
      kind: q.kind,
      paused: q.paused,
      active: stats[i]?.active,
      dead: stats[i]?.dead_lettered,
    })),
  };
}

/**
 * What the map's shape depends on: it is reloaded only when one of these changes. Counts are not
 * part of it: they come from each snapshot as it arrives, with no request of their own.
 */
function structureOf(snap: ConsoleSnapshot | undefined): string {
  if (!snap) return "";
  return JSON.stringify([
    snap.queues.map((q) => [q.name, q.kind, q.paused]),
    snap.subscriptions.map((s) => [s.topic, s.name, s.kind, s.paused, s.expr]),
  ]);
}

/** The loaded map with the snapshot's counts and queues (the feed is newer than the load). */
function withLiveCounts(data: TopoData, snap: ConsoleSnapshot | undefined): TopoData {
  if (!snap) return data;
  return {
    ...data,
    queues: snap.queues.map((q) => ({
      name: q.name,
      kind: q.kind,
      paused: q.paused,
      active: q.active,
      dead: q.dead_lettered,
    })),
  };
}

/** The diagram's content for screen readers (and anyone who prefers rows). */
function TopologyTable(props: { data: TopoData }) {
  const { topics, subs, queues } = props.data;
  const byName = new Map(queues.map((q) => [q.name, q]));
  const fed = new Set(subs.map(targetOf));
  const queueCells = (name: string | undefined) => {
    const q = name ? byName.get(name) : undefined;
    return html`<td>${name ? html`<a href=${href("queues", name)}>${name}</a>` : html`<span class="muted">none (log)</span>`}</td>
      <td class="num">${name ? count(q?.active) : "—"}</td>
      <td class="num">${name ? count(q?.dead) : "—"}</td>`;
  };
  return html`<${TableWrap} label="Topology as a table">
    <table class="data topology-table">
      <thead>
        <tr>
          <th scope="col">Topic</th>
          <th scope="col">Subscription</th>
          <th scope="col">Kind</th>
          <th scope="col">Filter</th>
          <th scope="col">State</th>
          <th scope="col">Queue</th>
          <th scope="col" class="num">Active</th>
          <th scope="col" class="num">Dead-lettered</th>
        </tr>
      </thead>
      <tbody>
        ${topics.flatMap((topic) => {
          const list = subs.filter((s) => s.topic === topic);
          if (list.length === 0)
            return html`<tr key=${topic}><th scope="row">${topic}</th><td colspan="7" class="muted">no subscriptions</td></tr>`;
          return list.map(
            (s) => html`<tr key=${`${topic}\u0000${s.name}`}>
              <th scope="row"><a href=${href("topics")}>${topic}</a></th>
              <td>${s.name}</td>
              <td>${s.kind}</td>
              <td class="mono">${s.expr ?? html`<span class="muted">match all</span>`}</td>
              <td>${s.paused ? html`<${Badge} tone="warn">paused<//>` : html`<${Badge} tone="ok">active<//>`}</td>
              ${queueCells(targetOf(s))}
            </tr>`,
          );
        })}
        ${queues
          .filter((q) => !fed.has(q.name))
          .map(
            (q) => html`<tr key=${q.name}>
              <th scope="row" class="muted">standalone</th>
              <td colspan="4" class="muted">${q.paused ? "queue, paused" : "queue"}</td>
              ${queueCells(q.name)}
            </tr>`,
          )}
      </tbody>
    </table>
  <//>`;
}

/** A few lines of text in a diagram. */
function Note(props: { x: number; y: number; lines: string[] }) {
  return html`<text class="note" x=${props.x} y=${props.y}>
    ${props.lines.map((l, i) => html`<tspan x=${props.x} dy=${i === 0 ? 0 : 16}>${l}</tspan>`)}
  </text>`;
}

function FanOutDiagram() {
  const consumers = [55, 125, 195];
  const subs = [
    { y: 45, name: "audit", expr: "match all", label: "copy", tone: "" },
    { y: 125, name: "eu-billing", expr: 'subject endsWith ".eu"', label: "copy", tone: "" },
    { y: 205, name: "us-billing", expr: 'subject endsWith ".us"', label: "✕ filtered out", tone: "refused" },
  ];
  return html`<${Diagram}
    title="Queue versus topic fan-out"
    desc="Left: a producer sends a message to a queue; of the consumers competing on the queue, one receives it. Right: a publisher publishes a message with subject orders.eu to a topic; the topic copies it into every subscription whose filter accepts it: audit (no filter) and eu-billing (subject ends with .eu) each get a copy, us-billing (subject ends with .us) filters it out. When no subscription accepts a message, or every one is paused, it is dropped: nothing is stored (a declared topic still keeps it in its log)."
    width=${1028}
    height=${340}
    testid="fan-out-diagram"
  >
    ${(arrow: string) => html`
      <text class="heading" x="16" y="24">Send to a queue: one consumer gets it</text>
      <${Box} x=${16} y=${125} w=${100} h=${44} tone="actor" lines=${["producer"]} />
      <${Arrow} marker=${arrow} d="M116,147 L178,147" label="send" at=${[147, 137]} />
      <${Box} x=${180} y=${125} w=${110} h=${44} tone="queue" lines=${[{ text: "orders", class: "name" }, { text: "queue", class: "meta" }]} />
      ${consumers.map((y, i) => {
        const c = curve(290, 147, 348, y + 22);
        return html`<${Arrow} marker=${arrow} d=${c.d} tone=${i === 1 ? "" : "idle"} label=${i === 1 ? "receive" : undefined} at=${[319, 139]} />
          <${Box} x=${350} y=${y} w=${80} h=${44} tone=${i === 1 ? "actor" : "idle"} lines=${["consumer"]} />`;
      })}
      <${Note} x=${16} y=${290} lines=${["Consumers compete: each message is locked by one of", "them, then completed, or redelivered if it fails."]} />
      <line class="divider" x1="448" y1="12" x2="448" y2="328" />
      <text class="heading" x="466" y="24">Publish to a topic: a copy per matching subscription</text>
      <${Note} x=${466} y=${112} lines=${["subject: orders.eu"]} />
      <${Box} x=${466} y=${125} w=${110} h=${44} tone="actor" lines=${["publisher"]} />
      <${Arrow} marker=${arrow} d="M576,147 L644,147" label="publish" at=${[610, 137]} />
      <${Box} x=${646} y=${125} w=${100} h=${44} tone="topic" lines=${[{ text: "events", class: "name" }, { text: "topic", class: "meta" }]} />
      ${subs.map((s) => {
        const c = curve(746, 147, 834, s.y + 22);
        // The straight middle edge carries its label above the line, the curved ones on it.
        const at: [number, number] = [c.mid[0] + 8, s.y + 22 === 147 ? 139 : c.mid[1]];
        return html`<${Arrow} marker=${arrow} d=${c.d} tone=${s.tone} label=${s.label} at=${at} />
          <${Box}
            x=${836}
            y=${s.y}
            w=${180}
            h=${44}
            tone=${s.tone ? "idle" : "sub"}
            lines=${[{ text: s.name, class: "name" }, { text: s.expr, class: s.expr === "match all" ? "meta" : "code" }]}
          />`;
      })}
      <${Arrow} marker=${arrow} tone="refused" d="M696,169 L696,250" label=${["none accepts it", "(or all paused)"]} at=${[688, 210]} anchor="end" />
      <${Box} x=${646} y=${252} w=${100} h=${36} tone="dead" lines=${[{ text: "✕ dropped", class: "alarm" }]} />
      <${Note}
        x=${466}
        y=${306}
        lines=${["Dropped: nothing is stored and the publish answers seq 0", "(a declared topic still keeps it in its log)."]}
      />
    `}
  <//>`;
}

function LifeDiagram() {
  const stateBox = (x: number, y: number, name: string, meta?: string) => {
    const lines = [{ text: name, class: "name" }, ...(meta ? [{ text: meta, class: "meta" }] : [])];
    return html`<${Box} x=${x} y=${y} w=${140} h=${44} tone=${`state ${name}`} lines=${lines} />`;
  };
  return html`<${Diagram}
    title="A message's life: its states and the verbs between them"
    desc="A new message becomes active on send, or scheduled on schedule. Scheduled becomes active when it is due. Receive locks an active message and counts a delivery. From locked: complete makes it completed; abandon or lock expiry below the delivery limit makes it active again; abandon with a delay makes it scheduled; defer makes it deferred, and receive-deferred locks it again with another delivery counted; reject, or abandon or lock expiry at the delivery limit (max deliveries), dead-letters it. Any live state (scheduled, active, locked, deferred) is dead-lettered, or deleted, when its TTL expires. Redrive makes a dead-lettered message active again with its delivery count reset."
    width=${960}
    height=${440}
    testid="life-diagram"
  >
    ${(arrow: string) => html`
      <rect class="region" x="170" y="34" width="540" height="246" rx="10" />
      <text class="note" x="176" y="24">live states: the TTL applies to each</text>
      <${Box} x=${16} y=${150} w=${100} h=${40} tone="actor" lines=${["new message"]} />
      ${stateBox(190, 50, "scheduled")}
      ${stateBox(190, 210, "active")}
      ${stateBox(540, 50, "deferred")}
      ${stateBox(540, 210, "locked")}
      ${stateBox(800, 210, "completed", "deleted or kept")}
      ${stateBox(540, 370, "dead_lettered")}
      <${Arrow} marker=${arrow} d=${curve(116, 180, 188, 232).d} label="send" at=${[150, 214]} />
      <${Arrow} marker=${arrow} d=${curve(116, 160, 188, 72).d} label="schedule" at=${[150, 108]} />
      <${Arrow} marker=${arrow} d="M260,94 L260,208" label="due" at=${[268, 151]} anchor="start" />
      <${Arrow} marker=${arrow} d="M330,222 L538,222" label="receive (count + 1)" at=${[435, 210]} />
      <${Arrow} marker=${arrow} d="M540,242 L332,242" label=${["abandon · lock expiry", "(count < max)"]} at=${[435, 262]} />
      <${Arrow} marker=${arrow} d="M680,232 L798,232" label="complete" at=${[739, 220]} />
      <${Arrow} marker=${arrow} d="M585,210 L585,96" label="defer" at=${[577, 151]} anchor="end" />
      <${Arrow} marker=${arrow} d="M635,94 L635,208" label=${["receive-deferred", "(count + 1)"]} at=${[643, 151]} anchor="start" />
      <${Arrow} marker=${arrow} d="M552,210 L334,84" label=${["abandon with delay", "(count < max)"]} at=${[430, 140]} />
      <${Arrow} marker=${arrow} tone="refused" d="M610,254 L610,368" label=${["reject", "max deliveries: abandon or", "lock expiry at count ≥ max"]} at=${[618, 311]} anchor="start" />
      <${Arrow} marker=${arrow} tone="refused" d="M470,280 C470,330 560,320 560,368" label=${["TTL expiry", "(or deleted)"]} at=${[460, 318]} anchor="end" />
      <${Arrow} marker=${arrow} d="M538,400 C300,400 260,330 260,256" label="redrive (count = 0)" at=${[360, 418]} />
    `}
  <//>`;
}

export function Topology() {
  const state = useStore(live);
  const topo = useAsync(loadTopology, [structureOf(state.snapshot)]);
  const data = topo.data && withLiveCounts(topo.data, state.snapshot);
  const empty = data && data.topics.length === 0 && data.queues.length === 0;
  return html`<div class="page">
    <header class="page-head">
      <h1>Topology</h1>
    </header>
    <${Card} title="This broker">
      <p class="muted">
        Topics, their subscriptions and the queues they fill, with each queue's active and dead-lettered
        messages; redrawn as they change.
      </p>
      ${topo.error && html`<p class="alert error" role="alert">${topo.error}</p>`}
      ${
        !data
          ? html`<p class="muted">Loading…</p>`
          : empty
            ? html`<${Empty}>No topics or queues yet.<//>`
            : html`<div class="diagram-frame" role="region" aria-label="Topology diagram" tabindex="0">
                <${TopologyDiagram} data=${data} />
              </div>
              <details class="more">
                <summary>The topology as a table</summary>
                <${TopologyTable} data=${data} />
              </details>`
      }
    <//>
    <${Card} title="Queue vs topic fan-out">
      <div class="diagram-frame" role="region" aria-label="Queue versus topic fan-out" tabindex="0">
        <${FanOutDiagram} />
      </div>
    <//>
    <${Card} title="A message's life">
      <div class="diagram-frame" role="region" aria-label="A message's life" tabindex="0">
        <${LifeDiagram} />
      </div>
      <p class="hint">
        Not drawn: renew (extends a lock), cancel (deletes a scheduled message never delivered),
        receive-and-delete (an active message is gone once received), purge and DLQ retention (dead letters
        are deleted). A completed message is deleted; the job face keeps it as completed for its retention.
      </p>
    <//>
  </div>`;
}
