import { html } from "htm/preact";
import type { ComponentChildren } from "preact";
import { useId } from "preact/hooks";
import { count, plural } from "../lib/format.js";
import { href } from "../lib/router.js";

// Diagrams drawn as inline SVG by hand: a few boxes and arrows do not justify a graph library, and
// the console loads nothing from elsewhere.

export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** One line of a box: plain text, or text with a class (`name`, `meta`, `code`, `alarm`). */
export type Line = string | { text: string; class: string };

/** An SVG image with a title (and a description) for assistive technology, and an arrowhead. */
export function Diagram(props: {
  title: string;
  desc?: string;
  width: number;
  height: number;
  testid?: string;
  children: (arrow: string) => ComponentChildren;
}) {
  const id = useId();
  return html`<svg
    class="diagram"
    data-testid=${props.testid}
    role="img"
    aria-labelledby=${`${id}-title`}
    aria-describedby=${props.desc ? `${id}-desc` : undefined}
    width=${props.width}
    height=${props.height}
    viewBox=${`0 0 ${props.width} ${props.height}`}
  >
    <title id=${`${id}-title`}>${props.title}</title>
    ${props.desc && html`<desc id=${`${id}-desc`}>${props.desc}</desc>`}
    <defs>
      <marker id=${`${id}-arrow`} viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto">
        <path d="M0,0 L10,5 L0,10 z" class="arrowhead" />
      </marker>
    </defs>
    ${props.children(`url(#${id}-arrow)`)}
  </svg>`;
}

/** Shortens text to what `width` pixels hold (an estimate: SVG text does not wrap or clip). */
export function fit(text: string, width: number): string {
  const max = Math.max(4, Math.floor(width / 7.2));
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A rounded box with centred lines of text; a link when `href` is given. */
export function Box(props: Rect & { tone: string; lines: Line[]; href?: string; tip?: string }) {
  const { x, y, w, h, lines } = props;
  const first = y + h / 2 - ((lines.length - 1) * 16) / 2 + 4;
  const body = html`<rect x=${x} y=${y} width=${w} height=${h} rx="6" />
    ${props.tip && html`<title>${props.tip}</title>`}
    ${lines.map((line, i) => {
      const { text, class: cls } = typeof line === "string" ? { text: line, class: "" } : line;
      return html`<text x=${x + w / 2} y=${first + i * 16} text-anchor="middle" class=${cls}>
        ${fit(text, w - 16)}
      </text>`;
    })}`;
  // Not a tab stop: inside role="img" a link has no name for a screen reader; the table below the
  // diagram carries the same links for the keyboard.
  return html`<g class=${`node ${props.tone}`}>
    ${props.href ? html`<a href=${props.href} tabindex="-1">${body}</a>` : body}
  </g>`;
}

/** An arrow along `d` with an optional label of one or more lines centred on `at`. */
export function Arrow(props: {
  d: string;
  marker: string;
  label?: string | string[];
  at?: [number, number];
  anchor?: "start" | "middle" | "end";
  tone?: string;
}) {
  const lines = typeof props.label === "string" ? [props.label] : (props.label ?? []);
  const [lx, ly] = props.at ?? [0, 0];
  return html`<g class=${`edge ${props.tone ?? ""}`}>
    <path d=${props.d} marker-end=${props.marker} />
    ${
      lines.length > 0 &&
      html`<text class="edge-label" x=${lx} y=${ly - ((lines.length - 1) * 14) / 2 + 4} text-anchor=${props.anchor ?? "middle"}>
        ${lines.map((l, i) => html`<tspan x=${lx} dy=${i === 0 ? 0 : 14}>${l}</tspan>`)}
      </text>`
    }
  </g>`;
}

/** A horizontal S-curve from (x1, y1) to (x2, y2), and its midpoint for a label. */
export function curve(x1: number, y1: number, x2: number, y2: number): { d: string; mid: [number, number] } {
  const mx = (x1 + x2) / 2;
  return { d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`, mid: [mx, (y1 + y2) / 2] };
}

// --- the live topology -------------------------------------------------------------------------

export interface TopoSub {
  topic: string;
  name: string;
  kind: string;
  paused: boolean;
  expr?: string | undefined;
  /** A task subscription's job queue. */
  queue?: string | undefined;
}

export interface TopoQueue {
  name: string;
  kind: string;
  paused?: boolean | undefined;
  /** Undefined when its Stats could not be read (deleted since the listing). */
  active?: number | undefined;
  dead?: number | undefined;
}

export interface TopoData {
  topics: string[];
  subs: TopoSub[];
  queues: TopoQueue[];
}

/** Where a subscription's copies land: its backing queue, a task's job queue; a log keeps none. */
export function targetOf(s: TopoSub): string | undefined {
  return s.kind === "queue" ? s.name : s.kind === "task" ? s.queue : undefined;
}

interface Placed extends Rect {
  tone: string;
  lines: Line[];
  href?: string;
  tip: string;
}

const PAD = 12;
const NODE_H = 58;
const ROW = 74;
const GAP = 150;
const TOPIC = { x: PAD, w: 180 };
const SUB = { x: TOPIC.x + TOPIC.w + GAP, w: 240 };
const QUEUE = { x: SUB.x + SUB.w + GAP, w: 200 };

/**
 * Columns topics | subscriptions | queues, one row per subscription: a topic sits level with the
 * middle of its subscriptions, a queue on the row of the first subscription that feeds it, and
 * standalone queues take a row each below.
 */
export function layoutTopology(data: TopoData) {
  const nodes: Placed[] = [];
  const edges: { d: string; mid: [number, number]; label: string; tone: string }[] = [];
  const stats = new Map(data.queues.map((q) => [q.name, q]));
  const queueNodes = new Map<string, Placed>();
  const top = (row: number) => PAD + row * ROW + (ROW - NODE_H) / 2;
  const link = (from: Rect, to: Rect, label: string, tone: string) =>
    edges.push({ ...curve(from.x + from.w, from.y + from.h / 2, to.x - 2, to.y + to.h / 2), label, tone });

  const placeQueue = (name: string, row: number): Placed => {
    const known = queueNodes.get(name);
    if (known) return known;
    const q = stats.get(name);
    const dead = q?.dead ?? 0;
    const node: Placed = {
      ...QUEUE,
      y: top(row),
      h: NODE_H,
      tone: q ? "queue" : "missing",
      lines: [
        { text: name, class: "name" },
        { text: `${count(q?.active)} active${q?.paused ? " · paused" : ""}`, class: "meta" },
        { text: `${count(q?.dead)} dead-lettered`, class: dead > 0 ? "alarm" : "meta" },
      ],
      ...(q && { href: href("queues", name) }),
      tip: q
        ? `Queue ${name}: ${count(q.active)} active, ${count(q.dead)} dead-lettered`
        : `${name}: no queue`,
    };
    queueNodes.set(name, node);
    nodes.push(node);
    return node;
  };

  let row = 0;
  for (const topic of data.topics) {
    const subs = data.subs.filter((s) => s.topic === topic).sort((a, b) => a.name.localeCompare(b.name));
    const first = row;
    const subNodes = subs.map((s) => {
      const state = s.paused ? "paused" : "active";
      const node: Placed = {
        ...SUB,
        y: top(row),
        h: NODE_H,
        tone: s.paused ? "sub-paused" : "sub",
        lines: [
          { text: s.name, class: "name" },
          { text: `${s.kind} · ${state}`, class: s.paused ? "warn" : "meta" },
          s.expr ? { text: s.expr, class: "code" } : { text: "match all", class: "meta" },
        ],
        href: s.kind === "queue" ? href("queues", s.name) : href("topics"),
        tip: `Subscription ${s.name} of ${topic} (${s.kind}, ${state}): ${s.expr ?? "match all"}`,
      };
      nodes.push(node);
      const target = targetOf(s);
      if (target) link(node, placeQueue(target, row), s.kind === "task" ? "jobs" : "copies", "");
      row++;
      return node;
    });
    if (subs.length === 0) row++;
    const topicNode: Placed = {
      ...TOPIC,
      y: PAD + ((first + row) / 2) * ROW - NODE_H / 2,
      h: NODE_H,
      tone: "topic",
      lines: [
        { text: topic, class: "name" },
        { text: "topic", class: "meta" },
        { text: plural(subs.length, "subscription"), class: "meta" },
      ],
      href: href("topics"),
      tip: `Topic ${topic}: ${plural(subs.length, "subscription")}`,
    };
    nodes.push(topicNode);
    subs.forEach((s, i) => {
      const label = s.paused ? "paused: no copies" : s.expr ? "if filter matches" : "every message";
      link(topicNode, subNodes[i]!, label, s.paused ? "paused" : "");
    });
  }
  for (const q of data.queues) if (!queueNodes.has(q.name)) placeQueue(q.name, row++);
  return { nodes, edges, width: QUEUE.x + QUEUE.w + PAD, height: 2 * PAD + row * ROW };
}

export function TopologyDiagram(props: { data: TopoData }) {
  const { nodes, edges, width, height } = layoutTopology(props.data);
  const { topics, subs, queues } = props.data;
  const title = `Topology: ${plural(topics.length, "topic")}, ${plural(subs.length, "subscription")}, ${plural(queues.length, "queue")}`;
  const desc =
    "Topics on the left with an arrow to each subscription in the middle, and from a subscription to the queue it fills on the right; the table below lists the same content.";
  return html`<${Diagram} title=${title} desc=${desc} width=${width} height=${height} testid="topology-diagram">
    ${(arrow: string) => html`
      ${edges.map((e) => html`<${Arrow} d=${e.d} marker=${arrow} label=${e.label} at=${e.mid} tone=${e.tone} />`)}
      ${nodes.map((n) => html`<${Box} ...${n} />`)}
    `}
  <//>`;
}
