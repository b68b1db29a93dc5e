import { html } from "htm/preact";

/** A failed attempt's error as the job face stores it: `{"errtype","message","traceback"}`, or plain text. */
export interface ParsedError {
  type?: string;
  message: string;
  stack?: string;
}

export function parseJobError(text: string): ParsedError {
  try {
    const e = JSON.parse(text) as { errtype?: unknown; message?: unknown; traceback?: unknown };
    if (e && typeof e === "object" && typeof e.message === "string") {
      return {
        ...(typeof e.errtype === "string" && e.errtype ? { type: e.errtype } : {}),
        message: e.message,
        ...(typeof e.traceback === "string" && e.traceback ? { stack: e.traceback } : {}),
      };
    }
  } catch {
    // not the job face's JSON: shown as it is
  }
  return { message: text };
}

/** The error's type and message, and its stack (collapsible) with real line breaks. */
export function JobError(props: { text: string }) {
  const e = parseJobError(props.text);
  return html`<div class="job-error">
    <p class="error-message"><strong>${e.type ?? "Error"}</strong>: ${e.message}</p>
    ${
      e.stack &&
      html`<details class="stack-trace">
        <summary>Stack trace</summary>
        <pre class="code error-text">${e.stack}</pre>
      </details>`
    }
  </div>`;
}
