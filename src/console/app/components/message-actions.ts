import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { attempt, confirmAction, notify } from "../lib/feedback.js";
import { api } from "../lib/session.js";
import type { Msg } from "./message.js";
import { TextField } from "./ui.js";

/** States whose message can be deleted here (a locked one belongs to its receiver until settled). */
const DELETABLE = new Set(["active", "deferred", "scheduled", "dead_lettered", "completed", "cancelled"]);
const WAITING = new Set(["active", "deferred", "scheduled"]);

/** Deletes one stored message: a waiting one is cancelled first, then the settled row is deleted. */
async function deleteOne(queue: string, m: Msg): Promise<void> {
  const seq = m.seq_number!;
  let state = m.state ?? "";
  if (WAITING.has(state)) {
    const r = await api().call("cancelMessage", { queue, seq_number: seq, retain_ms: 0 });
    if (r.outcome !== "cancelled")
      throw new Error(`message ${seq} is no longer waiting (it was received or settled)`);
    state = "cancelled";
  }
  const r = await api().call("deleteSettled", { queue, states: [state], seq_numbers: [seq] });
  if (r.deleted !== 1) throw new Error(`message ${seq} is no longer ${state.replace("_", "-")}`);
}

/** A copy of the message to send again: body and headers, without the message id (a dedup window would drop it). */
function copyOf(m: Msg) {
  return {
    ...(m.body ? { body: m.body } : {}),
    ...(m.subject ? { subject: m.subject } : {}),
    ...(m.content_type ? { content_type: m.content_type } : {}),
    ...(m.correlation_id ? { correlation_id: m.correlation_id } : {}),
    ...(m.reply_to ? { reply_to: m.reply_to } : {}),
    ...(m.group_id ? { group_id: m.group_id } : {}),
    ...(m.properties ? { properties: m.properties } : {}),
  };
}

/** One message's actions in the viewer: redrive (a dead letter), resend a copy, delete. */
export function MessageActions(props: { queue: string; message: Msg; onDone: () => void }) {
  const m = props.message;
  const seq = m.seq_number!;
  const [target, setTarget] = useState(props.queue);
  const state = m.state ?? "";

  const redrive = async () => {
    const ok = await confirmAction({
      title: `Redrive message ${seq}?`,
      message: `Dead letter ${seq} goes back to ${props.queue} as an active message.`,
      confirm: "Redrive",
    });
    if (!ok) return;
    const done = await attempt(async () => {
      const r = await api().call("redrive", { queue: props.queue, seq_numbers: [seq] });
      if (r.moved !== 1) throw new Error(`message ${seq} is no longer a dead letter`);
      notify(`Redrove ${seq}`);
    });
    if (done) props.onDone();
  };
  const resend = async (e: Event) => {
    e.preventDefault();
    const to = target.trim() || props.queue;
    const ok = await confirmAction({
      title: `Resend message ${seq}?`,
      message: `A copy of message ${seq} (body, subject, properties and headers; a new message id) is sent to ${to}. The original stays.`,
      confirm: "Resend",
    });
    if (!ok) return;
    const done = await attempt(async () => {
      const r = await api().call("send", { queue: to, messages: [copyOf(m)] });
      notify(`Resent ${seq} to ${to} as ${r.seq_numbers?.join(", ")}`);
    });
    if (done) props.onDone();
  };
  const remove = async () => {
    const ok = await confirmAction({
      title: `Delete message ${seq}?`,
      message: `Message ${seq} is deleted from ${props.queue}. This cannot be undone.`,
      confirm: "Delete message",
      danger: true,
    });
    if (!ok) return;
    if (await attempt(() => deleteOne(props.queue, m), `Deleted ${seq}`)) props.onDone();
  };

  return html`<section class="message-actions" aria-label="Message actions">
    <h3>Actions</h3>
    <div class="row-actions start">
      ${state === "dead_lettered" && html`<button type="button" class="primary" onClick=${redrive}>Redrive</button>`}
      ${
        DELETABLE.has(state)
          ? html`<button type="button" class="danger" onClick=${remove}>Delete</button>`
          : html`<span class="muted">A locked message is settled by its receiver; it cannot be deleted here.</span>`
      }
    </div>
    <form class="form inline" onSubmit=${resend} aria-label=${`Resend message ${seq}`}>
      <${TextField} label="Resend a copy to" name="resend_to" value=${target} onInput=${setTarget} list="queue-names" />
      <div class="form-actions"><button type="submit">Resend</button></div>
    </form>
  </section>`;
}
