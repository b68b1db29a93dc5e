import { html } from "htm/preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import type { RequestInputOf } from "../../../wire/routes.js";
import { STATES, type StateKey } from "../components/counts.js";
import { MessageViewer, type Msg } from "../components/message.js";
import { MessageActions } from "../components/message-actions.js";
import { MessageSearch } from "../components/message-search.js";
import { QueueConfigForm } from "../components/queue-form.js";
import { SendForm } from "../components/send-form.js";
import {
  Badge,
  Card,
  Empty,
  Facts,
  Modal,
  SelectField,
  TableWrap,
  Tabs,
  TextField,
} from "../components/ui.js";
import { access } from "../lib/access.js";
import { attempt, confirmAction, notify } from "../lib/feedback.js";
import { configDuration, count, dateTime, parseCount, parseDuration, relative } from "../lib/format.js";
import { live } from "../lib/live.js";
import { appendPage, type Cursor, MAX_LOADED, readPage } from "../lib/message-pages.js";
import { href, navigate, type Route } from "../lib/router.js";
import { api } from "../lib/session.js";
import { useStore } from "../lib/store.js";
import { useAsync, useReconnects } from "../lib/use-async.js";
import { Charts } from "./overview.js";
import { deleteQueue } from "./queues.js";

const PAGE = 50;
/** The list re-reads what it shows at most this often while the queue's counts move. */
export const REFRESH_MS = 5000;

function MessageList(props: {
  queue: string;
  state: StateKey;
  /** The live count of the state: the list re-reads (at most every REFRESH_MS) when it changes. */
  total: number;
  /** Moves when an action elsewhere changed the queue: the list re-reads at once. */
  refreshKey: number;
  manage: boolean;
  onView: (m: Msg) => void;
  onReceived: (ms: Msg[]) => void;
  onChanged: () => void;
}) {
  const [messages, setMessages] = useState<Msg[]>([]);
  const [more, setMore] = useState<Cursor>(undefined);
  const [loaded, setLoaded] = useState(false);
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string | undefined>();
  const dead = props.state === "dead_lettered";
  // What is loaded, for the refresh to re-read as much (a refresh never shrinks "Load more").
  const shownCount = useRef(PAGE);
  const lastRead = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const generation = useRef(0);

  /** Re-reads the first `shownCount` messages from the start, in one bounded call. */
  const refresh = async () => {
    clearTimeout(timer.current);
    timer.current = undefined;
    lastRead.current = Date.now();
    const mine = ++generation.current;
    try {
      const page = await readPage(props.queue, props.state, undefined, Math.max(PAGE, shownCount.current));
      if (mine !== generation.current) return;
      setMessages(page.messages);
      setMore(page.next);
      setError(undefined);
    } catch (err) {
      if (mine === generation.current) setError((err as Error).message);
    } finally {
      if (mine === generation.current) setLoaded(true);
    }
  };

  // A new queue or state: start again from one page.
  useEffect(() => {
    shownCount.current = PAGE;
    setMessages([]);
    setLoaded(false);
    setReason("");
    void refresh();
    return () => clearTimeout(timer.current);
  }, [props.queue, props.state]);
  // An action here or elsewhere, or a reconnect: re-read now.
  const epoch = useReconnects();
  const seen = useRef({ refreshKey: props.refreshKey, epoch });
  useEffect(() => {
    const before = seen.current;
    seen.current = { refreshKey: props.refreshKey, epoch };
    // A reconnect after a drop (not the page's first connection), or an action: re-read now.
    if (props.refreshKey !== before.refreshKey || (epoch !== before.epoch && before.epoch > 0))
      void refresh();
  }, [props.refreshKey, epoch]);
  // The live count moved: re-read, but at most every REFRESH_MS (not on every snapshot).
  useEffect(() => {
    if (timer.current) return;
    const wait = lastRead.current + REFRESH_MS - Date.now();
    if (wait <= 0) void refresh();
    else timer.current = setTimeout(() => void refresh(), wait);
  }, [props.total]);

  const loadMore = async () => {
    const mine = ++generation.current;
    try {
      const page = await readPage(props.queue, props.state, more, PAGE);
      if (mine !== generation.current) return;
      const next = appendPage(messages, page.messages).slice(0, MAX_LOADED);
      shownCount.current = next.length;
      setMessages(next);
      setMore(next.length >= MAX_LOADED ? undefined : page.next);
    } catch (err) {
      notify((err as Error).message, "error");
    }
  };

  const reasons = useMemo(
    () => [...new Set(messages.map((m) => m.dead_letter_reason ?? "").filter(Boolean))].sort(),
    [messages],
  );
  // A reason no longer listed (its dead letters were redriven) filters nothing.
  const activeReason = reasons.includes(reason) ? reason : "";
  const shown =
    dead && activeReason ? messages.filter((m) => m.dead_letter_reason === activeReason) : messages;

  const cancel = async (m: Msg) => {
    const ok = await confirmAction({
      title: `Cancel message ${m.seq_number}?`,
      message: `The scheduled message ${m.seq_number} is deleted before it is ever delivered.`,
      confirm: "Cancel message",
      danger: true,
    });
    if (
      ok &&
      (await attempt(
        () => api().call("cancel", { queue: props.queue, seq_number: m.seq_number }),
        `Cancelled ${m.seq_number}`,
      ))
    )
      props.onChanged();
  };
  const receiveDeferred = async (m: Msg) => {
    await attempt(async () => {
      const r = await api().call("receiveDeferred", { queue: props.queue, seq_numbers: [m.seq_number!] });
      props.onReceived(r.messages);
      notify(r.messages.length ? `Received deferred ${m.seq_number}; settle it below` : "Nothing received");
      props.onChanged();
    });
  };
  const redriveShown = async () => {
    const seqs = shown.map((m) => m.seq_number!).filter(Boolean);
    const ok = await confirmAction({
      title: `Redrive ${seqs.length} dead letter${seqs.length === 1 ? "" : "s"}?`,
      message: `The ${activeReason ? `dead letters with reason ${activeReason}` : "dead letters listed"} go back to ${props.queue} as active messages.`,
      confirm: "Redrive",
    });
    if (!ok) return;
    await attempt(async () => {
      const r = await api().call("redrive", { queue: props.queue, seq_numbers: seqs });
      notify(`Redrove ${r.moved}`);
      setReason("");
      props.onChanged();
    });
  };

  return html`<div class="message-list">
    ${
      dead &&
      messages.length > 0 &&
      html`<div class="toolbar">
      <${SelectField}
        label="Reason"
        name="reason"
        value=${activeReason}
        onChange=${setReason}
        options=${[["", `every reason (${messages.length})`], ...reasons.map((r) => [r, r] as [string, string])]}
      />
      ${
        props.manage &&
        html`<button type="button" onClick=${redriveShown} disabled=${shown.length === 0}>
        Redrive ${activeReason ? "these" : "listed"} (${shown.length})
      </button>`
      }
    </div>`
    }
    ${error && html`<p class="alert error" role="alert">${error}</p>`}
    ${
      !loaded
        ? html`<p class="muted">Loading…</p>`
        : shown.length === 0
          ? html`<${Empty}>No ${props.state.replace("_", "-")} messages.<//>`
          : html`<${TableWrap} label=${`${props.state} messages`}>
          <table class="data messages stack" data-state=${props.state}>
            <thead>
              <tr>
                <th scope="col">Seq</th>
                <th scope="col">Message id</th>
                <th scope="col">Subject</th>
                <th scope="col">Enqueued</th>
                <th scope="col" class="num">Deliveries</th>
                <th scope="col">${dead ? "Reason" : props.state === "scheduled" ? "Visible" : props.state === "locked" ? "Locked until" : "Group"}</th>
                <th scope="col"><span class="sr-only">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              ${shown.map(
                (m) => html`<tr key=${m.seq_number} data-seq=${m.seq_number}>
                  <td class="mono" data-label="Seq">${m.seq_number}</td>
                  <td class="mono ellipsis" data-label="Message id">${m.message_id ?? ""}</td>
                  <td class="ellipsis" data-label="Subject">${m.subject ?? ""}</td>
                  <td data-label="Enqueued">${dateTime(m.enqueued_at_ms)}</td>
                  <td class="num" data-label="Deliveries">${m.delivery_count ?? 0}</td>
                  <td data-label=${dead ? "Reason" : props.state === "scheduled" ? "Visible" : props.state === "locked" ? "Locked until" : "Group"}>
                    ${
                      dead
                        ? html`<span title=${m.dead_letter_description ?? ""}>${m.dead_letter_reason ?? ""}</span>`
                        : props.state === "scheduled"
                          ? relative(m.visible_at_ms)
                          : props.state === "locked"
                            ? relative(m.locked_until_ms)
                            : (m.group_id ?? "")
                    }
                  </td>
                  <td><div class="row-actions">
                    <button type="button" class="small" onClick=${() => props.onView({ ...m, state: m.state ?? props.state })} aria-label=${`View message ${m.seq_number}`}>View</button>
                    ${
                      props.manage &&
                      props.state === "scheduled" &&
                      html`<button type="button" class="small danger-text" onClick=${() => cancel(m)} aria-label=${`Cancel message ${m.seq_number}`}>Cancel</button>`
                    }
                    ${
                      props.manage &&
                      props.state === "deferred" &&
                      html`<button type="button" class="small" onClick=${() => receiveDeferred(m)} aria-label=${`Receive deferred message ${m.seq_number}`}>Receive</button>`
                    }
                  </div></td>
                </tr>`,
              )}
            </tbody>
          </table>
        <//>`
    }
    <div class="pager">
      <span class="muted" data-testid="loaded-count">${messages.length} loaded</span>
      <button type="button" class="ghost" onClick=${() => refresh()}>Refresh</button>
      ${more !== undefined && html`<button type="button" class="ghost" onClick=${loadMore}>Load more</button>`}
    </div>
  </div>`;
}

/** Redrive (target, max, older-than, rate) and purge (max, older-than), each confirmed. */
function DeadLetterActions(props: { queue: string; dead: number; queues: string[]; onDone: () => void }) {
  const [target, setTarget] = useState("");
  const [max, setMax] = useState("");
  const [older, setOlder] = useState("");
  const [ratePerSec, setRate] = useState("");
  const [pMax, setPMax] = useState("");
  const [pOlder, setPOlder] = useState("");

  const redrive = async (e: Event) => {
    e.preventDefault();
    let req: { queue: string; target: string; max?: number; older_than_ms?: number; rate_per_sec?: number };
    try {
      req = {
        queue: props.queue,
        target: target.trim(),
        max: parseCount(max, "max"),
        older_than_ms: parseDuration(older, "older than"),
        rate_per_sec: parseCount(ratePerSec, "rate"),
      };
    } catch (err) {
      notify((err as Error).message, "error");
      return;
    }
    const ok = await confirmAction({
      title: "Redrive dead letters?",
      message: `Move ${req.max ? `up to ${req.max}` : "every"} dead letter${req.older_than_ms ? ` older than ${older}` : ""} of ${props.queue} to ${req.target || props.queue} as active messages${req.rate_per_sec ? `, ${req.rate_per_sec} a second` : ""}.`,
      confirm: "Redrive",
    });
    if (!ok) return;
    await attempt(async () => {
      const r = await api().call("redrive", req);
      notify(`Redrove ${r.moved} message${r.moved === 1 ? "" : "s"}`);
      props.onDone();
    });
  };

  const purge = async (e: Event) => {
    e.preventDefault();
    let req: { queue: string; max?: number; older_than_ms?: number };
    try {
      req = {
        queue: props.queue,
        max: parseCount(pMax, "max"),
        older_than_ms: parseDuration(pOlder, "older than"),
      };
    } catch (err) {
      notify((err as Error).message, "error");
      return;
    }
    const ok = await confirmAction({
      title: "Purge dead letters?",
      message: `Delete ${req.max ? `up to ${req.max}` : "every"} dead letter${req.older_than_ms ? ` older than ${pOlder}` : ""} of ${props.queue}. This cannot be undone.`,
      confirm: "Purge",
      danger: true,
    });
    if (!ok) return;
    await attempt(async () => {
      const r = await api().call("purge", req);
      notify(`Purged ${r.purged} message${r.purged === 1 ? "" : "s"}`);
      props.onDone();
    });
  };

  return html`<div class="grid two dlq-actions">
    <form class="form" onSubmit=${redrive} aria-label="Redrive dead letters">
      <h3>Redrive</h3>
      <div class="form-grid">
        <${TextField} label="Target queue" name="target" value=${target} onInput=${setTarget} hint="Blank: back into this queue" list="queue-names" />
        <${TextField} label="Max" name="max" value=${max} onInput=${setMax} hint="Blank: all" />
        <${TextField} label="Older than" name="older_than" value=${older} onInput=${setOlder} hint="e.g. 1h; blank: any age" />
        <${TextField} label="Rate per second" name="rate" value=${ratePerSec} onInput=${setRate} hint="Blank: one transaction" />
      </div>
      <div class="form-actions"><button type="submit" disabled=${props.dead === 0}>Redrive…</button></div>
    </form>
    <form class="form" onSubmit=${purge} aria-label="Purge dead letters">
      <h3>Purge</h3>
      <div class="form-grid">
        <${TextField} label="Max" name="purge_max" value=${pMax} onInput=${setPMax} hint="Blank: all" />
        <${TextField} label="Older than" name="purge_older_than" value=${pOlder} onInput=${setPOlder} hint="Blank: any age" />
      </div>
      <div class="form-actions"><button type="submit" class="danger" disabled=${props.dead === 0}>Purge…</button></div>
    </form>
  </div>`;
}

/** Receive (peek-lock) and settle: complete, abandon, reject (with reason) or defer. */
function ReceivePanel(props: {
  queue: string;
  received: Msg[];
  setReceived: (ms: Msg[]) => void;
  onView: (m: Msg) => void;
}) {
  const [max, setMax] = useState("1");
  const [wait, setWait] = useState("0");
  const [reason, setReason] = useState("");
  const [description, setDescription] = useState("");

  const receive = async (e: Event) => {
    e.preventDefault();
    await attempt(async () => {
      const r = await api().call("receive", {
        queue: props.queue,
        max_messages: parseCount(max, "max messages") ?? 1,
        wait_time_ms: parseDuration(wait, "wait") ?? 0,
      });
      props.setReceived([...props.received, ...r.messages]);
      notify(
        r.messages.length ? `Received ${r.messages.length}` : "Nothing to receive",
        r.messages.length ? "ok" : "info",
      );
    });
  };
  const settle = async (m: Msg, how: "complete" | "abandon" | "reject" | "defer") => {
    const base = { queue: props.queue, seq_number: m.seq_number, lock_token: m.lock_token };
    const req =
      how === "reject"
        ? {
            ...base,
            dead_letter_reason: reason || undefined,
            dead_letter_description: description || undefined,
          }
        : base;
    const done = { complete: "Completed", abandon: "Abandoned", reject: "Rejected", defer: "Deferred" }[how];
    const ok = await attempt(() => api().call(how, req), `${done} ${m.seq_number}`);
    if (ok) props.setReceived(props.received.filter((x) => x !== m));
  };

  return html`<div class="receive">
    <form class="form inline" onSubmit=${receive} aria-label=${`Receive from ${props.queue}`}>
      <${TextField} label="Max messages" name="max_messages" value=${max} onInput=${setMax} />
      <${TextField} label="Wait" name="wait" value=${wait} onInput=${setWait} hint="Long-poll, up to 20s" />
      <div class="form-actions"><button type="submit" class="primary">Receive</button></div>
    </form>
    ${
      props.received.length > 0 &&
      html`<div class="form-grid reject-fields">
        <${TextField} label="Dead-letter reason (reject)" name="reject_reason" value=${reason} onInput=${setReason} placeholder="AppRequested" />
        <${TextField} label="Dead-letter description (reject)" name="reject_description" value=${description} onInput=${setDescription} />
      </div>
      <ul class="received" aria-label="Received messages">
        ${props.received.map(
          (m) => html`<li key=${m.seq_number} class="received-item" data-seq=${m.seq_number}>
            <div>
              <strong class="mono">#${m.seq_number}</strong>
              ${m.subject && html` <span>${m.subject}</span>`}
              <span class="muted"> · delivery ${m.delivery_count} · lock until ${dateTime(m.locked_until_ms)}</span>
            </div>
            <div class="row-actions">
              <button type="button" class="small" onClick=${() => props.onView(m)}>View</button>
              <button type="button" class="small primary" onClick=${() => settle(m, "complete")}>Complete</button>
              <button type="button" class="small" onClick=${() => settle(m, "abandon")}>Abandon</button>
              <button type="button" class="small" onClick=${() => settle(m, "defer")}>Defer</button>
              <button type="button" class="small danger" onClick=${() => settle(m, "reject")}>Reject</button>
            </div>
          </li>`,
        )}
      </ul>`
    }
  </div>`;
}

export function QueueDetail(props: { name: string; route: Route }) {
  const name = props.name;
  const state = useStore(live);
  const info = useAsync(
    async () => (await api().call("listQueues")).queues.find((q) => q.name === name),
    [name],
  );
  const rights = useStore(access);
  // The address holds the tab (`#/queues/orders?state=dead_lettered`): a link or a typed URL selects it.
  const asked = props.route.query.get("state") as StateKey | null;
  const tab: StateKey = asked && STATES.some(([key]) => key === asked) ? asked : "active";
  const setTab = (next: StateKey) =>
    navigate(`${href("queues", name)}${next === "active" ? "" : `?state=${next}`}`);
  const [refreshKey, setRefreshKey] = useState(0);
  const changed = () => setRefreshKey((n) => n + 1);
  const [viewing, setViewing] = useState<Msg | undefined>();
  const [received, setReceived] = useState<Msg[]>([]);
  const [editing, setEditing] = useState(false);
  const snapQ = state.snapshot?.queues.find((q) => q.name === name);
  const sub = state.snapshot?.subscriptions.find((s) => s.name === name);
  const q = info.data;

  useEffect(() => setReceived([]), [name]);

  const pause = async (paused: boolean) => {
    const ok = await attempt(
      () => api().call(paused ? "resumeQueue" : "pauseQueue", { name }),
      paused ? `Resumed ${name}` : `Paused ${name}: nothing is claimed from it`,
    );
    if (ok) void info.reload();
  };

  if (info.loading && !q) return html`<div class="page"><p class="muted">Loading…</p></div>`;
  if (!q)
    return html`<div class="page">
      <h1>Queue ${name}</h1>
      <p class="alert error" role="alert">${info.error ?? "No such queue."}</p>
      <a href=${href("queues")}>Back to queues</a>
    </div>`;

  const counts = STATES.map(([key, label]) => ({
    id: key,
    label: html`${label} <span class="tab-count" data-count=${key}>${count(snapQ?.[key] ?? 0)}</span>`,
  }));
  const paused = !!(snapQ?.paused ?? q.paused);
  return html`<div class="page">
    <header class="page-head">
      <div>
        <p class="crumbs"><a href=${href("queues")}>Queues</a> /</p>
        <h1>${name} ${paused && html`<${Badge} tone="warn">paused<//>`}</h1>
        ${sub && html`<p class="muted">Subscription of topic <a href=${href("topics")}>${sub.topic}</a></p>`}
      </div>
      <div class="actions">
        ${
          rights.manage &&
          html`<button type="button" onClick=${() => pause(paused)}>${paused ? "Resume" : "Pause"}</button>
        <button type="button" onClick=${() => setEditing(true)}>Edit config</button>`
        }
        ${
          rights.manage &&
          q.kind === "queue" &&
          html`<button
          type="button"
          class="danger"
          onClick=${async () => {
            if (await deleteQueue(name)) navigate(href("queues"));
          }}
        >
          Delete
        </button>`
        }
      </div>
    </header>
    <div class="grid two">
      <${Card} title="Config">
        <${Facts}
          label="Queue config"
          items=${[
            ["Kind", q.kind],
            ["Lock duration", configDuration(q.lock_duration_ms)],
            ["Max delivery count", String(q.max_delivery_count)],
            ["Default TTL", configDuration(q.default_ttl_ms, "never expires")],
            ["Dedup window", configDuration(q.dedup_window_ms, "off")],
            ["Ordering", q.ordering_mode ?? "standard"],
            ["On TTL expiry", q.dead_letter_on_expire === false ? "discard" : "dead-letter"],
            ["DLQ max age", configDuration(q.dlq_max_age_ms, "broker default")],
            ["DLQ max count", q.dlq_max_count ? count(q.dlq_max_count) : "broker default"],
            ["DLQ max bytes", q.dlq_max_bytes ? count(q.dlq_max_bytes) : "broker default"],
          ]}
        />
      <//>
      <${Card} title="Live">
        <${Charts} points=${state.perQueue.get(name) ?? []} counters=${state.snapshot?.counters ?? true} />
      <//>
    </div>
    <${Card} title="Messages" id="messages">
      <${Tabs} label="Messages by state" tabs=${counts} selected=${tab} onSelect=${(id: string) => setTab(id as StateKey)} />
      <div role="tabpanel" aria-label=${`${tab} messages`}>
        <${MessageList}
          queue=${name}
          state=${tab}
          total=${snapQ?.[tab] ?? 0}
          refreshKey=${refreshKey}
          manage=${rights.manage}
          onView=${setViewing}
          onReceived=${(ms: Msg[]) => setReceived([...received, ...ms])}
          onChanged=${changed}
        />
        ${
          rights.manage &&
          tab === "dead_lettered" &&
          html`<${DeadLetterActions}
          queue=${name}
          dead=${snapQ?.dead_lettered ?? 0}
          queues=${state.snapshot?.queues.filter((x) => x.kind === "queue").map((x) => x.name) ?? []}
          onDone=${changed}
        />`
        }
      </div>
    <//>
    <${Card} title="Search messages">
      <${MessageSearch} key=${`${name}/${tab}`} queue=${name} state=${tab} onView=${setViewing} />
    <//>
    ${
      rights.manage &&
      html`<div class="grid two">
      <${Card} title="Send a message">
        <${SendForm}
          target=${name}
          onSend=${(req: RequestInputOf<"send">) =>
            attempt(async () => {
              const r = await api().call("send", req);
              notify(`Sent: seq ${r.seq_numbers?.join(", ")}`);
              changed();
            })}
        />
      <//>
      <${Card} title="Receive and settle">
        <${ReceivePanel} queue=${name} received=${received} setReceived=${setReceived} onView=${setViewing} />
      <//>
    </div>`
    }
    <datalist id="queue-names">${(state.snapshot?.queues ?? []).filter((x) => x.kind === "queue").map((x) => html`<option value=${x.name} />`)}</datalist>
    <${MessageViewer}
      message=${viewing}
      onClose=${() => setViewing(undefined)}
      actions=${
        rights.manage &&
        viewing &&
        html`<${MessageActions}
          key=${viewing.seq_number}
          queue=${name}
          message=${viewing}
          onDone=${() => {
            setViewing(undefined);
            changed();
          }}
        />`
      }
    />
    <${Modal} open=${editing} title=${`Edit ${name}`} onClose=${() => setEditing(false)} wide=${true}>
      <${QueueConfigForm}
        existing=${q}
        submitLabel="Save config"
        onSubmit=${async (_n: string, config: object) => {
          const ok = await attempt(
            () =>
              api().call("createQueue", {
                name,
                config: { ...config, kind: q.kind === "queue" ? undefined : q.kind },
              }),
            `Saved ${name}`,
          );
          if (ok) {
            setEditing(false);
            void info.reload();
          }
          return ok;
        }}
      />
    <//>
  </div>`;
}
