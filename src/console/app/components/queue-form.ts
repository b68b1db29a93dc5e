import { html } from "htm/preact";
import { useState } from "preact/hooks";
import type { WireQueueConfig, WireQueueInfo } from "../../../wire/queue-config.js";
import { parseCount, parseDuration } from "../lib/format.js";
import { SelectField, TextField } from "./ui.js";

const ms = (v: number | undefined) => (v ? String(v) : "");

/** Every field of a queue's config; blank fields take the broker's defaults. */
export function QueueConfigForm(props: {
  /** Editing an existing queue: its name is fixed and its config pre-filled. */
  existing?: WireQueueInfo;
  submitLabel: string;
  onSubmit: (name: string, config: WireQueueConfig) => Promise<boolean>;
}) {
  const q = props.existing;
  const [name, setName] = useState(q?.name ?? "");
  const [lock, setLock] = useState(ms(q?.lock_duration_ms));
  const [maxDelivery, setMaxDelivery] = useState(ms(q?.max_delivery_count));
  const [ttl, setTtl] = useState(ms(q?.default_ttl_ms));
  const [dedup, setDedup] = useState(ms(q?.dedup_window_ms));
  const [ordering, setOrdering] = useState(q?.ordering_mode || "standard");
  const [onExpire, setOnExpire] = useState(q?.dead_letter_on_expire === false ? "discard" : "dead-letter");
  const [dlqAge, setDlqAge] = useState(ms(q?.dlq_max_age_ms));
  const [dlqCount, setDlqCount] = useState(ms(q?.dlq_max_count));
  const [dlqBytes, setDlqBytes] = useState(ms(q?.dlq_max_bytes));
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    let config: WireQueueConfig;
    try {
      config = {
        lock_duration_ms: parseDuration(lock, "lock duration"),
        max_delivery_count: parseCount(maxDelivery, "max delivery count"),
        default_ttl_ms: parseDuration(ttl, "default TTL"),
        dedup_window_ms: parseDuration(dedup, "dedup window"),
        ordering_mode: ordering,
        dead_letter_on_expire: onExpire === "dead-letter",
        dlq_max_age_ms: parseDuration(dlqAge, "DLQ max age"),
        dlq_max_count: parseCount(dlqCount, "DLQ max count"),
        dlq_max_bytes: parseCount(dlqBytes, "DLQ max bytes"),
      };
    } catch (err) {
      setError((err as Error).message);
      return;
    }
    if (!name.trim()) {
      setError("A queue needs a name.");
      return;
    }
    setError(undefined);
    setBusy(true);
    try {
      await props.onSubmit(name.trim(), config);
    } finally {
      setBusy(false);
    }
  };

  const durationHint = "ms, or 30s, 5m, 1h; blank: broker default";
  return html`<form class="form" onSubmit=${submit} aria-label=${props.submitLabel}>
    <div class="form-grid">
      ${
        q
          ? html`<p class="wide">Queue <strong>${q.name}</strong> (${q.kind}). Saving replaces its whole config.</p>`
          : html`<${TextField} label="Name" name="name" value=${name} onInput=${setName} required=${true} wide=${true} />`
      }
      <${TextField} label="Lock duration" name="lock_duration" value=${lock} onInput=${setLock} hint=${durationHint} placeholder="30s" />
      <${TextField}
        label="Max delivery count"
        name="max_delivery_count"
        value=${maxDelivery}
        onInput=${setMaxDelivery}
        hint="Deliveries before dead-lettering; blank: 10"
        placeholder="10"
      />
      <${TextField} label="Default TTL" name="default_ttl" value=${ttl} onInput=${setTtl} hint="blank or 0: never expires" />
      <${TextField} label="Dedup window" name="dedup_window" value=${dedup} onInput=${setDedup} hint="Same message id within it is dropped" />
      <${SelectField}
        label="Ordering"
        name="ordering"
        value=${ordering}
        onChange=${setOrdering}
        options=${[
          ["standard", "standard (no order)"],
          ["group_fifo", "group_fifo (in order per group id)"],
          ["strict_fifo", "strict_fifo (one at a time)"],
        ]}
      />
      <${SelectField}
        label="On TTL expiry"
        name="on_expire"
        value=${onExpire}
        onChange=${setOnExpire}
        options=${[["dead-letter", "dead-letter"], ["discard", "discard"]]}
      />
      <${TextField} label="DLQ max age" name="dlq_max_age" value=${dlqAge} onInput=${setDlqAge} hint=${durationHint} />
      <${TextField} label="DLQ max count" name="dlq_max_count" value=${dlqCount} onInput=${setDlqCount} hint="blank: broker default" />
      <${TextField} label="DLQ max bytes" name="dlq_max_bytes" value=${dlqBytes} onInput=${setDlqBytes} hint="blank: broker default" />
    </div>
    ${error && html`<p class="alert error" role="alert">${error}</p>`}
    <div class="form-actions">
      <button type="submit" class="primary" disabled=${busy}>${props.submitLabel}</button>
    </div>
  </form>`;
}
