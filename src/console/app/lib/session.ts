import { access, loadAccess } from "./access.js";
import { Api, type Session } from "./api.js";
import { startLive, stopLive } from "./live.js";
import { createStore } from "./store.js";

const KEY = "mqlite.console.session";

function load(): Session | undefined {
  try {
    const raw = sessionStorage.getItem(KEY);
    if (!raw) return undefined;
    const s = JSON.parse(raw) as Partial<Session>;
    return typeof s.url === "string" ? { url: s.url, token: s.token ?? "" } : undefined;
  } catch {
    return undefined;
  }
}

/** The signed-in broker (kept in sessionStorage: gone when the tab closes), or undefined. */
export const session = createStore<Session | undefined>(load());

/** The default broker URL: the page's own origin. */
export function defaultUrl(): string {
  return location.origin;
}

/** `http://host:port/` → `http://host:port` (no trailing slashes). */
export function normalizeUrl(url: string): string {
  return url.trim().replace(/\/+$/, "");
}

export function signIn(s: Session): void {
  sessionStorage.setItem(KEY, JSON.stringify(s));
  session.set(s);
  startLive(s);
  void loadAccess(s);
}

export function signOut(): void {
  sessionStorage.removeItem(KEY);
  stopLive();
  access.set({ manage: true, scopes: [] });
  session.set(undefined);
}

/** The client of the signed-in broker. */
export function api(): Api {
  const s = session.get();
  if (!s) throw new Error("not signed in");
  return new Api(s);
}
