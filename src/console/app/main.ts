import { html } from "htm/preact";
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ConfirmHost, Toasts } from "./components/ui.js";
import { live, startLive } from "./lib/live.js";
import { href, useRoute } from "./lib/router.js";
import { session, signOut } from "./lib/session.js";
import { useStore } from "./lib/store.js";
import { JobDetail } from "./pages/job-detail.js";
import { Jobs } from "./pages/jobs.js";
import { Overview } from "./pages/overview.js";
import { QueueDetail } from "./pages/queue-detail.js";
import { Queues } from "./pages/queues.js";
import { SignIn } from "./pages/signin.js";
import { Topics } from "./pages/topics.js";
import { Topology } from "./pages/topology.js";

const NAV = [
  { id: "overview", label: "Overview", to: href() },
  { id: "queues", label: "Queues", to: href("queues") },
  { id: "topics", label: "Topics", to: href("topics") },
  { id: "topology", label: "Topology", to: href("topology") },
  { id: "jobs", label: "Jobs", to: href("jobs") },
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
  return html`<span class=${`live-dot ${state.status}`} title=${state.error ?? ""}>
    <span class="dot" aria-hidden="true"></span>${text}
  </span>`;
}

function Shell(props: { url: string }) {
  const route = useRoute();
  const page = route.path[0] ?? "overview";
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
  else content = html`<${Overview} />`;
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
        <span class="broker-url" title="Broker">${props.url}</span>
        <button type="button" class="ghost" onClick=${signOut}>Sign out</button>
      </div>
    </header>
    <main id="main" tabindex="-1">${content}</main>`;
}

function App() {
  const s = useStore(session);
  const state = useStore(live);
  const [reason, setReason] = useState<string | undefined>();
  useEffect(() => {
    if (s && state.status === "off") startLive(s);
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
