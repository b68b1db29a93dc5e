import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { CountsTable } from "../components/counts.js";
import { QueueConfigForm } from "../components/queue-form.js";
import { Card, Empty, Modal } from "../components/ui.js";
import { access } from "../lib/access.js";
import { attempt, confirmAction } from "../lib/feedback.js";
import { live } from "../lib/live.js";
import { href, navigate } from "../lib/router.js";
import { api } from "../lib/session.js";
import { useStore } from "../lib/store.js";

export async function deleteQueue(name: string): Promise<boolean> {
  const ok = await confirmAction({
    title: `Delete queue ${name}?`,
    message: `The queue ${name} and every message in it are deleted. This cannot be undone.`,
    confirm: "Delete queue",
    danger: true,
  });
  return ok && attempt(() => api().call("deleteQueue", { name }), `Deleted ${name}`);
}

export function Queues() {
  const state = useStore(live);
  const [creating, setCreating] = useState(false);
  const snap = state.snapshot;
  const plain = snap?.queues.filter((q) => q.kind === "queue") ?? [];
  const backing = snap?.queues.filter((q) => q.kind !== "queue") ?? [];

  return html`<div class="page">
    <header class="page-head">
      <h1>Queues</h1>
      <div class="actions">
        ${access.get().manage && html`<button type="button" class="primary" onClick=${() => setCreating(true)}>New queue</button>`}
      </div>
    </header>
    <${Card} title="Queues">
      ${
        !snap
          ? html`<p class="muted">Waiting for the first snapshot…</p>`
          : plain.length === 0
            ? html`<${Empty}>No queues yet.<//>`
            : html`<${CountsTable}
              label="Queues, counts by state"
              queues=${plain}
              subscriptions=${snap.subscriptions}
              actions=${(q: { name: string }) =>
                access.get().manage &&
                html`<button type="button" class="small danger-text" onClick=${() => deleteQueue(q.name)} aria-label=${`Delete ${q.name}`}>
                  Delete
                </button>`}
            />`
      }
    <//>
    ${
      backing.length > 0 &&
      html`<${Card} title="Subscription queues">
      <${CountsTable}
        label="Subscription backing queues, counts by state"
        queues=${backing}
        subscriptions=${snap?.subscriptions ?? []}
      />
    <//>`
    }
    <${Modal} open=${creating} title="New queue" onClose=${() => setCreating(false)} wide=${true}>
      <${QueueConfigForm}
        submitLabel="Create queue"
        onSubmit=${async (name: string, config: object) => {
          const ok = await attempt(() => api().call("createQueue", { name, config }), `Created ${name}`);
          if (ok) {
            setCreating(false);
            navigate(href("queues", name));
          }
          return ok;
        }}
      />
    <//>
  </div>`;
}
