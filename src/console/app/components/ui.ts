import { html } from "htm/preact";
import type { ComponentChildren } from "preact";
import { useEffect, useId, useRef, useState } from "preact/hooks";
import { confirmation, dismiss, toasts } from "../lib/feedback.js";
import { useStore } from "../lib/store.js";

/** A labelled form field; `hint` is tied to the input with aria-describedby. */
export function Field(props: {
  label: string;
  hint?: string;
  error?: string | undefined;
  children: (id: string, describedBy: string | undefined) => ComponentChildren;
  wide?: boolean;
}) {
  const id = useId();
  const hintId = props.hint || props.error ? `${id}-hint` : undefined;
  return html`<div class=${`field${props.wide ? " wide" : ""}`}>
    <label for=${id}>${props.label}</label>
    ${props.children(id, hintId)}
    ${
      props.error
        ? html`<p id=${hintId} class="hint error">${props.error}</p>`
        : props.hint && html`<p id=${hintId} class="hint">${props.hint}</p>`
    }
  </div>`;
}

/** A text input bound to a value. */
export function TextField(props: {
  label: string;
  value: string;
  onInput: (v: string) => void;
  hint?: string;
  placeholder?: string;
  type?: string;
  required?: boolean;
  wide?: boolean;
  name?: string;
  autocomplete?: string;
  list?: string;
}) {
  return html`<${Field} label=${props.label} hint=${props.hint} wide=${props.wide}>
    ${(id: string, describedBy: string | undefined) =>
      html`<input
        id=${id}
        name=${props.name}
        type=${props.type ?? "text"}
        value=${props.value}
        placeholder=${props.placeholder}
        required=${props.required}
        autocomplete=${props.autocomplete ?? "off"}
        list=${props.list}
        aria-describedby=${describedBy}
        onInput=${(e: Event) => props.onInput((e.currentTarget as HTMLInputElement).value)}
      />`}
  <//>`;
}

export function TextArea(props: {
  label: string;
  value: string;
  onInput: (v: string) => void;
  hint?: string;
  error?: string | undefined;
  rows?: number;
  placeholder?: string;
  mono?: boolean;
  name?: string;
}) {
  return html`<${Field} label=${props.label} hint=${props.hint} error=${props.error} wide=${true}>
    ${(id: string, describedBy: string | undefined) =>
      html`<textarea
        id=${id}
        name=${props.name}
        rows=${props.rows ?? 4}
        class=${props.mono ? "mono" : ""}
        placeholder=${props.placeholder}
        spellcheck=${false}
        aria-invalid=${props.error ? "true" : undefined}
        aria-describedby=${describedBy}
        value=${props.value}
        onInput=${(e: Event) => props.onInput((e.currentTarget as HTMLTextAreaElement).value)}
      ></textarea>`}
  <//>`;
}

export function SelectField(props: {
  label: string;
  value: string;
  options: (string | [value: string, label: string])[];
  onChange: (v: string) => void;
  hint?: string;
  name?: string;
}) {
  return html`<${Field} label=${props.label} hint=${props.hint}>
    ${(id: string, describedBy: string | undefined) =>
      html`<select
        id=${id}
        name=${props.name}
        aria-describedby=${describedBy}
        value=${props.value}
        onChange=${(e: Event) => props.onChange((e.currentTarget as HTMLSelectElement).value)}
      >
        ${props.options.map((o) => {
          const [value, label] = typeof o === "string" ? [o, o] : o;
          return html`<option value=${value} selected=${value === props.value}>${label}</option>`;
        })}
      </select>`}
  <//>`;
}

export function Badge(props: { tone?: string; children: ComponentChildren; title?: string }) {
  return html`<span class=${`badge ${props.tone ?? ""}`} title=${props.title}>${props.children}</span>`;
}

/** The tone of a message state or job status badge. */
export function stateTone(state: string | undefined): string {
  switch (state) {
    case "active":
    case "pending":
      return "info";
    case "locked":
    case "running":
      return "accent";
    case "completed":
    case "complete":
      return "ok";
    case "dead_lettered":
    case "dead":
      return "danger";
    case "scheduled":
    case "deferred":
    case "failed":
      return "warn";
    default:
      return "muted";
  }
}

export function Card(props: {
  title?: ComponentChildren;
  actions?: ComponentChildren;
  children: ComponentChildren;
  id?: string;
  class?: string;
}) {
  const headingId = useId();
  return html`<section class=${`card ${props.class ?? ""}`} id=${props.id} aria-labelledby=${props.title ? headingId : undefined}>
    ${
      (props.title || props.actions) &&
      html`<header class="card-head">
      ${props.title && html`<h2 id=${headingId}>${props.title}</h2>`}
      ${props.actions && html`<div class="actions">${props.actions}</div>`}
    </header>`
    }
    ${props.children}
  </section>`;
}

export function Empty(props: { children: ComponentChildren }) {
  return html`<p class="empty">${props.children}</p>`;
}

/** A native modal dialog: focus moves in, Escape closes it, focus returns to the opener. */
export function Modal(props: {
  open: boolean;
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  wide?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return html`<dialog
    ref=${ref}
    class=${props.wide ? "wide" : ""}
    aria-labelledby=${titleId}
    onClose=${() => props.open && props.onClose()}
  >
    ${
      props.open &&
      html`<header class="dialog-head">
        <h2 id=${titleId}>${props.title}</h2>
        <button type="button" class="icon" aria-label="Close" onClick=${props.onClose}>✕</button>
      </header>
      <div class="dialog-body">${props.children}</div>`
    }
  </dialog>`;
}

/** The one confirmation dialog of the app (see `confirmAction`). */
export function ConfirmHost() {
  const request = useStore(confirmation);
  return html`<${Modal} open=${!!request} title=${request?.title ?? ""} onClose=${() => request?.resolve(false)}>
    ${
      request &&
      html`<p class="confirm-text">${request.message}</p>
      <div class="form-actions">
        <button type="button" onClick=${() => request.resolve(false)}>Cancel</button>
        <button
          type="button"
          class=${request.danger ? "danger" : "primary"}
          onClick=${() => request.resolve(true)}
          autofocus
        >
          ${request.confirm}
        </button>
      </div>`
    }
  <//>`;
}

/**
 * The toasts, bottom right. Clicks pass through them (CSS), and while they show the page keeps as
 * much room below its end (`--toast-space`), so the last buttons of a page can be scrolled clear.
 */
export function Toasts() {
  const list = useStore(toasts);
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const root = document.documentElement;
    const update = () =>
      root.style.setProperty("--toast-space", el.offsetHeight > 0 ? `${el.offsetHeight + 24}px` : "0px");
    const observer = new ResizeObserver(update);
    observer.observe(el);
    update();
    return () => observer.disconnect();
  }, []);
  return html`<div class="toasts" role="status" aria-live="polite" ref=${ref}>
    ${list.map(
      (t) => html`<div key=${t.id} class=${`toast ${t.kind}`}>
        <span>${t.text}</span>
        <button type="button" class="icon" aria-label="Dismiss" onClick=${() => dismiss(t.id)}>✕</button>
      </div>`,
    )}
  </div>`;
}

/** Tabs with arrow-key navigation (WAI-ARIA tabs pattern). */
export function Tabs(props: {
  label: string;
  tabs: { id: string; label: ComponentChildren }[];
  selected: string;
  onSelect: (id: string) => void;
}) {
  const onKey = (e: KeyboardEvent) => {
    const buttons = [...(e.currentTarget as HTMLElement).querySelectorAll<HTMLElement>("[role=tab]")];
    const focused = buttons.indexOf(document.activeElement as HTMLElement);
    const i = focused >= 0 ? focused : props.tabs.findIndex((t) => t.id === props.selected);
    let next = -1;
    if (e.key === "ArrowRight") next = (i + 1) % props.tabs.length;
    else if (e.key === "ArrowLeft") next = (i - 1 + props.tabs.length) % props.tabs.length;
    else if (e.key === "Home") next = 0;
    else if (e.key === "End") next = props.tabs.length - 1;
    if (next < 0) return;
    e.preventDefault();
    const tab = props.tabs[next]!;
    props.onSelect(tab.id);
    buttons[next]?.focus();
  };
  return html`<div class="tabs" role="tablist" aria-label=${props.label} onKeyDown=${onKey}>
    ${props.tabs.map(
      (t) => html`<button
        type="button"
        role="tab"
        key=${t.id}
        aria-selected=${t.id === props.selected ? "true" : "false"}
        tabindex=${t.id === props.selected ? 0 : -1}
        onClick=${() => props.onSelect(t.id)}
      >
        ${t.label}
      </button>`,
    )}
  </div>`;
}

/** A label/value list. */
export function Facts(props: { items: [string, ComponentChildren][]; label?: string }) {
  return html`<dl class="facts" aria-label=${props.label}>
    ${props.items.map(([k, v]) => html`<div key=${k}><dt>${k}</dt><dd>${v}</dd></div>`)}
  </dl>`;
}

/** A value that changes as the user types, settled after `ms` of quiet. */
export function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return settled;
}

/** A horizontally scrollable, labelled table wrapper (narrow screens keep every column). */
export function TableWrap(props: { label: string; children: ComponentChildren }) {
  return html`<div class="table-wrap" role="region" aria-label=${props.label} tabindex="0">
    ${props.children}
  </div>`;
}
