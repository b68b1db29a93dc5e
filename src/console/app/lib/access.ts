import { authHeaders, type Session } from "./api.js";
import { createStore } from "./store.js";

/** What the signed-in token may do, as `GET /auth/whoami` tells. */
export interface Access {
  /** False for a token without the `manage` scope: the console hides or disables every action that changes something. */
  manage: boolean;
  /** The token's id (a configured name or a hash prefix), when the broker says. */
  tokenId?: string;
  scopes: string[];
}

/** Until the broker answers, and for a broker that has no `/auth/whoami`: full access (the broker still enforces its scopes). */
const FULL: Access = { manage: true, scopes: [] };

export const access = createStore<Access>(FULL);

interface WhoAmI {
  auth: boolean;
  token_id: string | null;
  scopes: string[];
}

/** Reads the token's scopes. A 404 (a broker without scoped tokens) or a failure keeps full access. */
export async function loadAccess(session: Session): Promise<void> {
  access.set(FULL);
  let res: Response;
  try {
    res = await fetch(`${session.url}/auth/whoami`, { headers: authHeaders(session), cache: "no-store" });
  } catch {
    return;
  }
  if (!res.ok) return;
  let body: WhoAmI;
  try {
    body = (await res.json()) as WhoAmI;
  } catch {
    return;
  }
  const scopes = Array.isArray(body.scopes) ? body.scopes.map(String) : [];
  access.set({
    manage: !body.auth || scopes.includes("manage"),
    ...(body.token_id ? { tokenId: body.token_id } : {}),
    scopes,
  });
}
