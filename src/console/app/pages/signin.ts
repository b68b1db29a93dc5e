import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { TextField } from "../components/ui.js";
import { type ApiError, call } from "../lib/api.js";
import { defaultUrl, normalizeUrl, signIn } from "../lib/session.js";

/** Broker URL (default: this page's origin) and token; checked with a Status call before it is kept. */
export function SignIn(props: { reason?: string | undefined }) {
  const [url, setUrl] = useState(defaultUrl());
  const [token, setToken] = useState("");
  const [error, setError] = useState<string | undefined>(props.reason);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    const session = { url: normalizeUrl(url || defaultUrl()), token: token.trim() };
    setBusy(true);
    setError(undefined);
    try {
      await call(session, "status");
      signIn(session);
    } catch (err) {
      const e2 = err as ApiError;
      setError(
        e2.code === "unauthenticated"
          ? session.token
            ? "The broker refused this token."
            : "This broker has auth on: enter a token."
          : e2.message,
      );
    } finally {
      setBusy(false);
    }
  };

  return html`<main class="signin" id="main">
    <form class="card signin-card" onSubmit=${submit} aria-labelledby="signin-title">
      <div class="brand big" aria-hidden="true"><span class="logo">◆</span> mqlite</div>
      <h1 id="signin-title">Sign in to a broker</h1>
      <p class="muted">
        The token is kept in this tab only (sessionStorage) and sent as
        <code>Authorization: Bearer</code> with every call.
      </p>
      <${TextField}
        label="Broker URL"
        name="url"
        type="url"
        value=${url}
        onInput=${setUrl}
        hint="Another broker works too when its MQLITE_CORS allows this page's origin."
        required=${true}
        wide=${true}
      />
      <${TextField}
        label="Token"
        name="token"
        type="password"
        value=${token}
        onInput=${setToken}
        hint="Leave empty when the broker runs with auth off."
        autocomplete="current-password"
        wide=${true}
      />
      ${error && html`<p class="alert error" role="alert">${error}</p>`}
      <div class="form-actions">
        <button type="submit" class="primary" disabled=${busy}>${busy ? "Signing in…" : "Sign in"}</button>
      </div>
    </form>
  </main>`;
}
