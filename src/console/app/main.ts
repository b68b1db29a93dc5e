import { html } from "htm/preact";
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ConfirmHost, Toasts } from "./components/ui.js";
import { access, loadAccess } from "./lib/access.js";
import { setTimeZone, timeOfDay, timeZone } from "./lib/format.js";
import { live, startLive } from "./lib/live.js";
import { href, useRoute } from "./lib/router.js";
import { session, signOut } from "./lib/session.js";
import { useStore } from "./lib/store.js";
import { JobDetail } from "./pages/job-detail.js";
import { Jobs } from "./pages/jobs.js";
import { Overview } from "./pages/overview.js";
import { Periodic } from "./pages/periodic.js";
import { QueueDetail } from "./pages/queue-detail.js";
import { Queues } from "./pages/queues.js";
import { SignIn } from "./pages/signin.js";
import { Topics } from "./pages/topics.js";
import { Topology } from "./pages/topology.js";
import { Workers } from "./pages/workers.js";

const NAV = [
  { id: "overview", label: "Overview", to: href() },
  { id: "queues", label: "Queues", to: href("queues") },
  { id: "topics", label: "Topics", to: href("topics") },
  { id: "topology", label: "Topology", to: href("topology") },
  { id: "jobs", label: "Jobs", to: href("jobs") },
  { id: "periodic", label: "Periodic", to: href("periodic") },
  { id: "workers", label: "Workers", to: href("workers") },
];

function LiveDot() {
  const state = useStore(live);
  const text =
    state.status === "live"
      ? "Live"
      : state.status === "retrying"
        ? "Reconnecting…"
        : state.status === "connecting"
          ? "Connecting…"
          : "Offline";
  return html`<span class=${`live-dot ${state.status}`} title=${state.error ?? ""} data-testid="connection">
    <span class="dot" aria-hidden="true"></span>${text}
  </span>`;
}

/** While the feed is down, says so, and how old the figures on the page are. */
function ConnectionBanner() {
  const state = useStore(live);
  if (state.status !== "retrying") return null;
  return html`<div class="connection-banner" role="alert">
    <strong>Connection to the broker lost</strong> (${state.error ?? "no answer"}). Reconnecting…
    ${
      state.receivedAt
        ? html` The figures below are from ${timeOfDay(state.receivedAt)} and are not live.`
        : " Nothing has been read yet."
    }
  </div>`;
}

function TimeToggle() {
  const zone = useStore(timeZone);
  return html`<button
    type="button"
    class="ghost small time-toggle"
    title="Show times in UTC or in this browser's time zone"
    onClick=${() => setTimeZone(zone === "utc" ? "local" : "utc")}
  >
    ${zone === "utc" ? "UTC" : "Local time"}
  </button>`;
}

function NotFound(props: { path: string }) {
  return html`<div class="page">
    <h1>Not found</h1>
    <p>The console has no page <code>#/${props.path}</code>.</p>
    <a href=${href()}>Go to the overview</a>
  </div>`;
}

function Shell(props: { url: string }) {
  const route = useRoute();
  const page = route.path[0] ?? "overview";
  // Re-render every page when the time zone or the token's rights change.
  useStore(timeZone);
  const rights = useStore(access);
  const state = useStore(live);
  useEffect(() => {
    document.title = `${NAV.find((n) => n.id === page)?.label ?? "mqlite"} · mqlite`;
  }, [page]);
  let content: ReturnType<typeof html>;
  if (page === "queues" && route.path[1])
    content = html`<${QueueDetail} name=${route.path[1]} route=${route} />`;
  else if (page === "queues") content = html`<${Queues} />`;
  else if (page === "topics") content = html`<${Topics} />`;
  else if (page === "topology") content = html`<${Topology} />`;
  else if (page === "jobs" && route.path[1]) content = html`<${JobDetail} id=${route.path[1]} />`;
  else if (page === "jobs") content = html`<${Jobs} route=${route} />`;
  else if (page === "periodic") content = html`<${Periodic} />`;
  else if (page === "workers") content = html`<${Workers} />`;
  else if (page === "overview") content = html`<${Overview} />`;
  else content = html`<${NotFound} path=${route.path.join("/")} />`;
  return html`<a class="skip" href="#main" onClick=${(e: Event) => {
    e.preventDefault();
    document.getElementById("main")?.focus();
  }}>Skip to content</a>
    <header class="topbar">
      <a class="brand" href=${href()}><span class="logo" aria-hidden="true">◆</span> mqlite</a>
      <nav aria-label="Main">
        <ul>
          ${NAV.map(
            (n) => html`<li key=${n.id}>
              <a href=${n.to} aria-current=${n.id === page ? "page" : undefined}>${n.label}</a>
            </li>`,
          )}
        </ul>
      </nav>
      <div class="session">
        <${LiveDot} />
        ${
          !rights.manage &&
          html`<span class="badge warn" title=${`Token ${rights.tokenId ?? ""}: ${rights.scopes.join(", ") || "no scopes"}`}>read-only</span>`
        }
        <${TimeToggle} />
        <span class="broker-url" title="Broker">${props.url}</span>
        <button type="button" class="ghost" onClick=${signOut}>Sign out</button>
      </div>
    </header>
    <${ConnectionBanner} />
    <main id="main" tabindex="-1" class=${state.status === "retrying" ? "stale" : ""}>${content}</main>`;
}

function App() {
  const s = useStore(session);
  const state = useStore(live);
  const [reason, setReason] = useState<string | undefined>();
  useEffect(() => {
    if (s && state.status === "off") {
      startLive(s);
      void loadAccess(s);
    }
  }, [s]);
  useEffect(() => {
    if (state.status === "unauthorized") {
      setReason("The broker refused the token; sign in again.");
      signOut();
    }
  }, [state.status]);
  return html`${s ? html`<${Shell} url=${s.url} />` : html`<${SignIn} reason=${reason} />`}
    <${ConfirmHost} />
    <${Toasts} />`;
}

render(html`<${App} />`, document.getElementById("app")!);
