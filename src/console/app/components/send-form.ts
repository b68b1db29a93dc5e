import { html } from "htm/preact";
import { useState } from "preact/hooks";
import {
  parseCount,
  parseDuration,
  parseLocalDateTime,
  parseProperties,
  utf8ToBase64,
} from "../lib/format.js";
import { Field, TextArea, TextField } from "./ui.js";

/** The fields of one message to send. */
export interface Draft {
  body: string;
  messageId: string;
  groupId: string;
  subject: string;
  contentType: string;
  correlationId: string;
  replyTo: string;
  properties: string;
}

export const emptyDraft = (): Draft => ({
  body: "",
  messageId: "",
  groupId: "",
  subject: "",
  contentType: "",
  correlationId: "",
  replyTo: "",
  properties: "",
});

/** A draft as a wire message (throws on a malformed property line). */
export function draftToWire(d: Draft) {
  return {
    body: d.body ? utf8ToBase64(d.body) : undefined,
    message_id: d.messageId || undefined,
    group_id: d.groupId || undefined,
    subject: d.subject || undefined,
    content_type: d.contentType || undefined,
    correlation_id: d.correlationId || undefined,
    reply_to: d.replyTo || undefined,
    properties: parseProperties(d.properties),
  };
}

/** The message fields shared by the send form and the dry-run sample. */
export function DraftFields(props: { draft: Draft; onChange: (d: Draft) => void; idPrefix?: string }) {
  const d = props.draft;
  const set = (key: keyof Draft) => (v: string) => props.onChange({ ...d, [key]: v });
  return html`<div class="form-grid">
    <${TextArea} label="Body" name="body" value=${d.body} onInput=${set("body")} rows=${5} mono=${true} placeholder='{"hello": "world"}' />
    <${TextField} label="Subject" name="subject" value=${d.subject} onInput=${set("subject")} placeholder="orders.eu.created" />
    <${TextField} label="Content type" name="content_type" value=${d.contentType} onInput=${set("contentType")} placeholder="application/json" />
    <${TextField} label="Message id" name="message_id" value=${d.messageId} onInput=${set("messageId")} hint="Dedup key within the queue's dedup window" />
    <${TextField} label="Group id" name="group_id" value=${d.groupId} onInput=${set("groupId")} hint="Ordering group (group_fifo)" />
    <${TextField} label="Correlation id" name="correlation_id" value=${d.correlationId} onInput=${set("correlationId")} />
    <${TextField} label="Reply to" name="reply_to" value=${d.replyTo} onInput=${set("replyTo")} />
    <${TextArea}
      label="Properties"
      name="properties"
      value=${d.properties}
      onInput=${set("properties")}
      rows=${3}
      mono=${true}
      hint="One key=value per line"
      placeholder="tier=gold"
    />
  </div>`;
}

/** Send a message: every field, TTL, a schedule time, and the extensions (priority, delay, limits). */
export function SendForm(props: {
  target: string;
  onSend: (request: {
    queue: string;
    messages: object[];
    ttl_ms?: number;
    scheduled_enqueue_time_ms?: number;
  }) => Promise<boolean>;
}) {
  const [draft, setDraft] = useState(emptyDraft());
  const [ttl, setTtl] = useState("");
  const [schedule, setSchedule] = useState("");
  const [priority, setPriority] = useState("");
  const [delay, setDelay] = useState("");
  const [uniqueKey, setUniqueKey] = useState("");
  const [maxDelivery, setMaxDelivery] = useState("");
  const [lockDuration, setLockDuration] = useState("");
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    let request: Parameters<typeof props.onSend>[0];
    try {
      const p = priority.trim() === "" ? undefined : Number(priority);
      if (p !== undefined && !Number.isInteger(p)) throw new Error("priority: a whole number");
      request = {
        queue: props.target,
        messages: [
          {
            ...draftToWire(draft),
            priority: p || undefined,
            delay_ms: parseDuration(delay, "delay"),
            unique_key: uniqueKey || undefined,
            max_delivery_count: parseCount(maxDelivery, "max delivery count"),
            lock_duration_ms: parseDuration(lockDuration, "lock duration"),
          },
        ],
        ttl_ms: parseDuration(ttl, "TTL"),
        scheduled_enqueue_time_ms: parseLocalDateTime(schedule),
      };
    } catch (err) {
      setError((err as Error).message);
      return;
    }
    setError(undefined);
    setBusy(true);
    try {
      if (await props.onSend(request)) setDraft({ ...draft, messageId: "" });
    } finally {
      setBusy(false);
    }
  };

  return html`<form class="form" onSubmit=${submit} aria-label=${`Send a message to ${props.target}`}>
    <${DraftFields} draft=${draft} onChange=${setDraft} />
    <div class="form-grid">
      <${TextField} label="TTL" name="ttl" value=${ttl} onInput=${setTtl} hint="ms, or 30s, 5m; blank: the queue's default" />
      <${Field} label="Schedule at" hint="Local time; blank: now">
        ${(id: string, hint: string | undefined) =>
          html`<input
            id=${id}
            name="schedule"
            type="datetime-local"
            step="1"
            aria-describedby=${hint}
            value=${schedule}
            onInput=${(e: Event) => setSchedule((e.currentTarget as HTMLInputElement).value)}
          />`}
      <//>
    </div>
    <details class="more">
      <summary>More fields (priority, delay, unique key, limits)</summary>
      <div class="form-grid">
        <${TextField} label="Priority" name="priority" value=${priority} onInput=${setPriority} hint="Higher is claimed first" />
        <${TextField} label="Delay" name="delay" value=${delay} onInput=${setDelay} hint="Deliver no earlier than this after sending" />
        <${TextField} label="Unique key" name="unique_key" value=${uniqueKey} onInput=${setUniqueKey} hint="No copy while a live message has it" />
        <${TextField} label="Max delivery count" name="msg_max_delivery" value=${maxDelivery} onInput=${setMaxDelivery} hint="This message's own limit" />
        <${TextField} label="Lock duration" name="msg_lock_duration" value=${lockDuration} onInput=${setLockDuration} hint="This message's own lease" />
      </div>
    </details>
    ${error && html`<p class="alert error" role="alert">${error}</p>`}
    <div class="form-actions">
      <button type="submit" class="primary" disabled=${busy}>Send</button>
    </div>
  </form>`;
}
