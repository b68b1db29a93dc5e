import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import type { ResponseOf } from "../../../wire/routes.js";
import { api } from "../lib/session.js";
import { TextArea, useDebounced } from "./ui.js";

export type FilterResult = ResponseOf<"testFilter">;

/** Runs TestFilter on the expression (and the sample, when given) after `ms` of quiet typing. */
export function useFilterCheck(expr: string, sample: object | undefined, ms = 300) {
  const settled = useDebounced(JSON.stringify([expr, sample ?? null]), ms);
  const [result, setResult] = useState<FilterResult | undefined>();
  const [checking, setChecking] = useState(false);
  useEffect(() => {
    const [e, s] = JSON.parse(settled) as [string, object | null];
    if (e.trim() === "") {
      setResult(undefined);
      return;
    }
    let stale = false;
    setChecking(true);
    api()
      .call("testFilter", { expr: e, ...(s && { message: s }) })
      .then(
        (r) => !stale && setResult(r),
        (err: Error) => !stale && setResult({ valid: false, error: err.message, ran: false, matched: false }),
      )
      .finally(() => !stale && setChecking(false));
    return () => {
      stale = true;
    };
  }, [settled]);
  return {
    result: expr.trim() === "" ? undefined : result,
    checking: checking || settled !== JSON.stringify([expr, sample ?? null]),
  };
}

export const EXAMPLES: [string, string][] = [
  ['subject == "orders.created"', "one subject"],
  ['subject startsWith "orders."', "a subject prefix"],
  ['subject_parts[1] == "eu"', "a part of a dotted subject"],
  ['properties["tier"] == "gold"', "a property"],
  ['"priority" in properties', "a property is present"],
  ["body_json.amount > 100", "a JSON body field"],
  ['body_text contains "urgent"', "the body's text"],
  ['content_type == "application/json" && body_size < 1024', "content type and size"],
  ["enqueued_at.Hour() >= 9 && enqueued_at.Hour() < 17", "a time window (UTC)"],
];

/** A filter textarea with live validation, a dry run against the sample, and insertable examples. */
export function FilterEditor(props: {
  value: string;
  onInput: (v: string) => void;
  /** The dry-run sample (a wire message), or undefined for validation only. */
  sample?: object | undefined;
  label?: string;
}) {
  const { result, checking } = useFilterCheck(props.value, props.sample);
  let verdict: ReturnType<typeof html> | string = "Empty: matches every message.";
  let tone = "muted";
  if (props.value.trim() !== "") {
    if (checking && !result) verdict = "Checking…";
    else if (result && !result.valid) {
      verdict = `✕ invalid expression: ${result.error ?? ""}`;
      tone = "bad";
    } else if (result) {
      const run = props.sample
        ? result.matched
          ? " · sample: ✓ would route"
          : ` · sample: ✕ filtered out${result.error ? ` (${result.error})` : ""}`
        : "";
      verdict = `✓ valid${run}`;
      tone = result.matched || !props.sample ? "good" : "warn";
    }
  }
  return html`<div class="filter-editor">
    <${TextArea}
      label=${props.label ?? "Filter"}
      name="filter"
      value=${props.value}
      onInput=${props.onInput}
      rows=${3}
      mono=${true}
      placeholder='subject startsWith "orders." && properties["tier"] == "gold"'
      error=${result && !result.valid ? result.error : undefined}
    />
    <p class=${`verdict ${tone}`} role="status" aria-live="polite" data-testid="filter-verdict">${verdict}</p>
    <details class="reference">
      <summary>Filter reference</summary>
      <p class="muted">
        Names: <code>subject</code>, <code>subject_parts</code>, <code>properties</code>, <code>property_keys</code>,
        <code>message_id</code>, <code>correlation_id</code>, <code>group_id</code>, <code>reply_to</code>,
        <code>content_type</code>, <code>body_size</code>, <code>body_text</code>, <code>body_json</code>,
        <code>enqueued_at</code>, <code>visible_at</code>. Durations: <code>seconds(n)</code>, <code>minutes(n)</code>,
        <code>hours(n)</code>, <code>days(n)</code>. A filter that fails at run time does not match.
      </p>
      <ul class="examples">
        ${EXAMPLES.map(
          ([expr, what]) => html`<li key=${expr}>
            <button type="button" class="small" onClick=${() => props.onInput(expr)} aria-label=${`Insert example: ${what}`}>Insert</button>
            <code>${expr}</code> <span class="muted">${what}</span>
          </li>`,
        )}
      </ul>
    </details>
  </div>`;
}
