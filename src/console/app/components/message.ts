import { html } from "htm/preact";
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import type { WireMessageRecord } from "../../../wire/job-service.js";
import { bytes, dateTime, decodeBody, hexDump } from "../lib/format.js";
import { parseJobError } from "./job-error.js";
import { Badge, Facts, Modal, stateTone, Tabs } from "./ui.js";

/** A message as Peek, Receive or Browse return it. */
export type Msg = WireMessageRecord;

/** The body three ways: pretty JSON (when it parses), text (when it is UTF-8) and hex. */
export function BodyView(props: { body: string | null | undefined; label?: string }) {
  const decoded = decodeBody(props.body);
  const views = [
    ...(decoded.json !== undefined ? [{ id: "json", label: "JSON" }] : []),
    ...(decoded.text !== undefined ? [{ id: "text", label: "Text" }] : []),
    { id: "hex", label: "Hex" },
  ];
  const [view, setView] = useState(views[0]!.id);
  const shown = views.some((v) => v.id === view) ? view : views[0]!.id;
  const content =
    shown === "json" ? decoded.json : shown === "text" ? decoded.text : hexDump(decoded.bytes) || "(empty)";
  return html`<div class="body-view">
    <div class="body-head">
      <span class="muted">${props.label ?? "Body"} · ${bytes(decoded.bytes.length)}</span>
      <${Tabs} label=${`${props.label ?? "Body"} format`} tabs=${views} selected=${shown} onSelect=${setView} />
    </div>
    <pre class="code" tabindex="0" aria-label=${`${props.label ?? "Body"} as ${shown}`}>${content || "(empty)"}</pre>
  </div>`;
}

/** The headers of a message, as label/value pairs (only the ones it has). */
export function headerFacts(m: Msg): [string, string | ReturnType<typeof html>][] {
  const rows: [string, string | ReturnType<typeof html>][] = [];
  const add = (k: string, v: unknown) => {
    if (v !== undefined && v !== null && v !== "" && v !== 0) rows.push([k, String(v)]);
  };
  add("Sequence", m.seq_number);
  if (m.queue) add("Queue", m.queue);
  if (m.state) rows.push(["State", html`<${Badge} tone=${stateTone(m.state)}>${m.state}<//>`]);
  add("Message id", m.message_id);
  add("Subject", m.subject);
  add("Content type", m.content_type);
  add("Correlation id", m.correlation_id);
  add("Reply to", m.reply_to);
  add("Group id", m.group_id);
  add("Priority", m.priority);
  add("Delivery count", m.delivery_count);
  add("Max deliveries", m.max_delivery_count);
  add("Lock duration", m.lock_duration_ms && `${m.lock_duration_ms} ms`);
  add("Unique key", m.unique_key);
  add("Enqueued", m.enqueued_at_ms && dateTime(m.enqueued_at_ms));
  if (m.visible_at_ms && m.visible_at_ms !== m.enqueued_at_ms) add("Visible at", dateTime(m.visible_at_ms));
  add("Locked until", m.locked_until_ms && dateTime(m.locked_until_ms));
  add("Lock token", m.lock_token);
  add("Expires", m.expires_at_ms && dateTime(m.expires_at_ms));
  add("Delivered", m.delivered_at_ms && dateTime(m.delivered_at_ms));
  add("Settled", m.settled_at_ms && dateTime(m.settled_at_ms));
  add("Dead-letter reason", m.dead_letter_reason);
  add("Dead-letter description", m.dead_letter_description);
  add("Redriven", m.redrive_count);
  if (m.last_error) {
    const e = parseJobError(m.last_error);
    add("Last error", e.type ? `${e.type}: ${e.message}` : e.message);
  }
  return rows;
}

export function PropertiesTable(props: { properties: Record<string, string | null> | null | undefined }) {
  const entries = Object.entries(props.properties ?? {});
  if (entries.length === 0) return html`<p class="muted">No properties.</p>`;
  return html`<table class="props">
    <caption class="sr-only">Properties</caption>
    <thead><tr><th scope="col">Key</th><th scope="col">Value</th></tr></thead>
    <tbody>
      ${entries.map(([k, v]) => html`<tr key=${k}><th scope="row">${k}</th><td class="mono">${v ?? ""}</td></tr>`)}
    </tbody>
  </table>`;
}

/** The message viewer: headers, properties and the body. */
export function MessageViewer(props: {
  message: Msg | undefined;
  onClose: () => void;
  /** What can be done with the message (shown under the body). */
  actions?: ComponentChildren;
}) {
  const m = props.message;
  return html`<${Modal}
    open=${!!m}
    wide=${true}
    title=${m ? `Message ${m.seq_number ?? ""}` : ""}
    onClose=${props.onClose}
  >
    ${
      m &&
      html`<div class="viewer">
      <section aria-label="Headers">
        <h3>Headers</h3>
        <${Facts} items=${headerFacts(m)} />
      </section>
      <section aria-label="Properties">
        <h3>Properties</h3>
        <${PropertiesTable} properties=${m.properties} />
      </section>
      <section aria-label="Body">
        <${BodyView} body=${m.body} />
      </section>
      ${props.actions}
    </div>`
    }
  <//>`;
}
