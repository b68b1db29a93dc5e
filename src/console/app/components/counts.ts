import { html } from "htm/preact";
import { count, duration } from "../lib/format.js";
import type { QueueSnapshot, SubscriptionSnapshot } from "../lib/live.js";
import { href } from "../lib/router.js";
import { Badge, TableWrap } from "./ui.js";

export const STATES = [
  ["active", "Active"],
  ["locked", "Locked"],
  ["deferred", "Deferred"],
  ["scheduled", "Scheduled"],
  ["dead_lettered", "Dead-lettered"],
  ["completed", "Completed"],
  ["cancelled", "Cancelled"],
] as const;

export type StateKey = (typeof STATES)[number][0];

/** Every queue with its counts by state (a subscription's backing queue names its topic). */
export function CountsTable(props: {
  queues: QueueSnapshot[];
  subscriptions: SubscriptionSnapshot[];
  label: string;
  actions?: (q: QueueSnapshot) => ReturnType<typeof html> | null;
}) {
  const topicOf = new Map(props.subscriptions.map((s) => [s.name, s.topic]));
  return html`<${TableWrap} label=${props.label}>
    <table class="data counts stack">
      <thead>
        <tr>
          <th scope="col">Queue</th>
          <th scope="col">Kind</th>
          ${STATES.map(([, label]) => html`<th scope="col" class="num">${label}</th>`)}
          <th scope="col" class="num">Oldest</th>
          ${props.actions && html`<th scope="col"><span class="sr-only">Actions</span></th>`}
        </tr>
      </thead>
      <tbody>
        ${props.queues.map((q) => {
          const topic = topicOf.get(q.name);
          return html`<tr key=${q.name}>
            <th scope="row">
              <a href=${href("queues", q.name)}>${q.name}</a>
              ${q.paused && html` <${Badge} tone="warn">paused<//>`}
            </th>
            <td data-label="Kind">${topic ? html`subscription of <a href=${href("topics")}>${topic}</a>` : q.kind}</td>
            ${STATES.map(
              ([
                key,
                label,
              ]) => html`<td class=${`num ${q[key] > 0 ? `has ${key}` : "zero"}`} data-state=${key} data-label=${label}>
                ${count(q[key])}
              </td>`,
            )}
            <td class="num" data-label="Oldest">${q.oldest_message_age_ms ? duration(q.oldest_message_age_ms) : "—"}</td>
            ${props.actions && html`<td><div class="row-actions">${props.actions(q)}</div></td>`}
          </tr>`;
        })}
      </tbody>
    </table>
  <//>`;
}
