import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { notify } from "../lib/feedback.js";
import { dateTime } from "../lib/format.js";
import { appendPage, type Cursor, readPage } from "../lib/message-pages.js";
import { messageMatches, type SearchField } from "../lib/message-search.js";
import { STATES, type StateKey } from "./counts.js";
import type { Msg } from "./message.js";
import { Empty, SelectField, TableWrap, TextField } from "./ui.js";

/** Messages one search step reads at most (one Peek or Browse call); the next step goes on from there. */
export const SEARCH_SCAN = 500;
/** Matches kept at most; a search stops growing beyond this. */
const MAX_MATCHES = 200;

/**
 * Finds messages of one queue and state by body text, subject or property. The search reads the
 * queue in bounded steps (SEARCH_SCAN messages each, from a cursor), so a large queue costs one step
 * at a time and the user asks for the next.
 */
export function MessageSearch(props: { queue: string; state: StateKey; onView: (m: Msg) => void }) {
  const [needle, setNeedle] = useState("");
  const [field, setField] = useState<SearchField>("any");
  const [state, setState] = useState<StateKey>(props.state);
  const [matches, setMatches] = useState<Msg[] | undefined>();
  const [cursor, setCursor] = useState<Cursor>(undefined);
  const [scanned, setScanned] = useState(0);
  const [busy, setBusy] = useState(false);

  const step = async (fresh: boolean) => {
    if (needle.trim() === "") return;
    setBusy(true);
    try {
      const page = await readPage(props.queue, state, fresh ? undefined : cursor, SEARCH_SCAN);
      const found = page.messages.filter((m) => messageMatches(m, needle, field));
      setMatches((prev) => appendPage(fresh ? [] : (prev ?? []), found).slice(0, MAX_MATCHES));
      setCursor(page.next);
      setScanned((n) => (fresh ? 0 : n) + page.messages.length);
    } catch (err) {
      notify((err as Error).message, "error");
    } finally {
      setBusy(false);
    }
  };

  return html`<div class="message-search">
    <form
      class="toolbar"
      role="search"
      aria-label=${`Search messages of ${props.queue}`}
      onSubmit=${(e: Event) => {
        e.preventDefault();
        void step(true);
      }}
    >
      <${TextField} label="Find" name="find" type="search" value=${needle} onInput=${setNeedle} placeholder="text, subject or key=value" />
      <${SelectField}
        label="In"
        name="find_in"
        value=${field}
        onChange=${(v: string) => setField(v as SearchField)}
        options=${[["any", "anywhere"], ["body", "body"], ["subject", "subject"], ["property", "properties"]]}
      />
      <${SelectField}
        label="State"
        name="find_state"
        value=${state}
        onChange=${(v: string) => setState(v as StateKey)}
        options=${STATES.map(([key, label]) => [key, label] as [string, string])}
      />
      <div class="form-actions"><button type="submit" class="primary" disabled=${busy || needle.trim() === ""}>Search</button></div>
    </form>
    ${
      matches &&
      html`<p class="muted" data-testid="search-summary">
        ${matches.length} match${matches.length === 1 ? "" : "es"} in the first ${scanned} ${state.replace("_", "-")} message${scanned === 1 ? "" : "s"}${cursor === undefined ? " (all of them)" : ""}.
      </p>
      ${
        matches.length === 0
          ? html`<${Empty}>No message matches yet.<//>`
          : html`<${TableWrap} label="Search results">
            <table class="data messages stack" data-testid="search-results">
              <thead><tr><th scope="col">Seq</th><th scope="col">Subject</th><th scope="col">Enqueued</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
              <tbody>
                ${matches.map(
                  (m) => html`<tr key=${m.seq_number} data-seq=${m.seq_number}>
                    <td class="mono" data-label="Seq">${m.seq_number}</td>
                    <td class="ellipsis" data-label="Subject">${m.subject ?? ""}</td>
                    <td data-label="Enqueued">${dateTime(m.enqueued_at_ms)}</td>
                    <td><button type="button" class="small" onClick=${() => props.onView({ ...m, state: m.state ?? state })} aria-label=${`View message ${m.seq_number}`}>View</button></td>
                  </tr>`,
                )}
              </tbody>
            </table>
          <//>`
      }
      ${
        cursor !== undefined &&
        matches.length < MAX_MATCHES &&
        html`<button type="button" class="ghost" disabled=${busy} onClick=${() => step(false)}>Search the next ${SEARCH_SCAN}</button>`
      }`
    }
  </div>`;
}
