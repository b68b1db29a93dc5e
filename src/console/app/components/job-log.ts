import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { dateTime } from "../lib/format.js";
import { api } from "../lib/session.js";
import { useAsync } from "../lib/use-async.js";
import { Card } from "./ui.js";

/** Lines read per "Load more" (the broker keeps at most 1000 per job and pages by 1000 at most). */
export const LOG_PAGE = 50;

/**
 * A job's log lines, oldest first. While the job runs it re-reads once a second as many lines as
 * were loaded, so a refresh never undoes "Load more"; once it is finished the lines stay as read.
 */
export function JobLog(props: { seq: number; running: boolean; tick: number }) {
  const [shown, setShown] = useState(LOG_PAGE);
  const log = useAsync(
    () => api().call("messageLog", { seq_number: props.seq, offset: 0, limit: shown }),
    [props.seq, shown, props.running ? Math.floor(props.tick / 1000) : -1],
  );
  const page = log.data;
  const title = page ? `Log (${page.total})` : "Log";
  return html`<${Card} title=${title}>
    ${
      !page
        ? log.error
          ? html`<p class="alert error" role="alert">${log.error}</p>`
          : html`<p class="muted">Loading…</p>`
        : page.entries.length === 0
          ? html`<p class="muted">No log lines.</p>`
          : html`<ol class="job-log" data-testid="job-log">
            ${page.entries.map(
              (e) => html`<li key=${e.index}>
                <span class="when">${dateTime(e.at_ms)}</span>
                <span class="text">${e.text}</span>
              </li>`,
            )}
          </ol>`
    }
    ${
      page &&
      page.total > page.entries.length &&
      html`<div class="pager">
        <span class="muted" data-testid="log-count">${page.entries.length} of ${page.total} lines</span>
        <button type="button" class="ghost" onClick=${() => setShown((n) => n + LOG_PAGE)}>Load more</button>
      </div>`
    }
  <//>`;
}
