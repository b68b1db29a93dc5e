import { hash } from "node:crypto";
import { InvalidArgumentError } from "../../contract/errors.js";
import { parseScope, type Scope, scopeText } from "./scopes.js";

/**
 * One configured token in object form (`startServer({ tokens: [{ token, name, scopes }] })`); the
 * string form `name:token=scope+scope` says the same (see `parseTokenEntry`).
 */
export interface TokenSpec {
  token: string;
  /** Its id in the audit log and `/auth/whoami`. Absent: `sha256:` and 12 hex digits of its hash. */
  name?: string;
  /** Absent or empty: full access (`manage`). */
  scopes?: readonly string[];
}

/** A `tokens` entry: a string (`token`, `token=scopes`, `name:token=scopes`) or a `TokenSpec`. */
export type TokenEntry = string | TokenSpec;

/** Who made a request: set on the hono context as `principal` by the auth gate. */
export interface Principal {
  /** The token's id (its name, or its hash prefix); null when auth is off. Never the token. */
  readonly id: string | null;
  /** The scopes as configured, e.g. `["monitor", "send:orders.*"]`. */
  readonly scopes: readonly string[];
  readonly grants: readonly Scope[];
}

/** The principal of every request when auth is off: full access, no id. */
export const ANONYMOUS: Principal = Object.freeze({
  id: null,
  scopes: Object.freeze(["manage"]),
  grants: Object.freeze([{ kind: "manage" } as const]),
});

const NAME = /^[A-Za-z0-9._-]{1,64}$/;
/** Scope lists are short; this bounds what a misconfiguration can cost each check. */
export const MAX_SCOPES_PER_TOKEN = 64;

/**
 * Reads a string entry. Everything after the last `=` is a `+`-separated scope list (a token
 * ending in `=`, base64 padding, keeps full access); before it, a `name:` prefix (letters, digits,
 * `.`, `_`, `-`) names the token. So `scraper:s3cret=monitor`, `s3cret=send:orders.*+monitor`.
 */
export function parseTokenEntry(entry: string): TokenSpec {
  const eq = entry.lastIndexOf("=");
  const scoped = eq >= 0 && eq < entry.length - 1;
  const head = scoped ? entry.slice(0, eq) : entry;
  const colon = head.indexOf(":");
  const named = colon > 0 && NAME.test(head.slice(0, colon));
  return {
    token: named ? head.slice(colon + 1) : head,
    ...(named && { name: head.slice(0, colon) }),
    ...(scoped && { scopes: entry.slice(eq + 1).split("+") }),
  };
}

/**
 * A token's SHA-256 as a string, the key it is looked up by. One-shot (no Hash object) and to a
 * string: a third of the cost of `createHash` or of a Buffer digest, paid on every request.
 */
const digest = (token: string) => hash("sha256", token, "base64");

/** The id of an unnamed token: enough of its hash to tell tokens apart, not enough to matter. */
export function tokenHashId(token: string): string {
  return `sha256:${hash("sha256", token, "hex").slice(0, 12)}`;
}

/** Validates entries into principals with their digests; a bad entry throws `invalid_argument`. */
export function resolveTokens(entries: readonly TokenEntry[]): { digest: string; principal: Principal }[] {
  const ids = new Set<string>();
  const tokens = new Set<string>();
  return entries.map((entry, i) => {
    const spec = typeof entry === "string" ? parseTokenEntry(entry) : entry;
    const where = spec.name ? `token "${spec.name}"` : `token #${i + 1}`;
    if (!spec.token) throw new InvalidArgumentError(`mqlite: ${where} is empty`);
    if (spec.name !== undefined && !NAME.test(spec.name)) {
      throw new InvalidArgumentError(
        `mqlite: token name "${spec.name}" must be 1 to 64 letters, digits, ".", "_" or "-"`,
      );
    }
    if (tokens.has(spec.token)) throw new InvalidArgumentError(`mqlite: ${where} is configured twice`);
    tokens.add(spec.token);
    const id = spec.name ?? tokenHashId(spec.token);
    if (ids.has(id)) throw new InvalidArgumentError(`mqlite: two tokens are named "${id}"`);
    ids.add(id);
    const texts = spec.scopes && spec.scopes.length > 0 ? spec.scopes : ["manage"];
    if (texts.length > MAX_SCOPES_PER_TOKEN) {
      throw new InvalidArgumentError(`mqlite: ${where} has over ${MAX_SCOPES_PER_TOKEN} scopes`);
    }
    const grants = texts.map(parseScope);
    const principal: Principal = Object.freeze({
      id,
      scopes: Object.freeze(grants.map(scopeText)),
      grants: Object.freeze(grants),
    });
    return { digest: digest(spec.token), principal };
  });
}

/**
 * Finds the principal of `Authorization: Bearer <token>` among the configured tokens by the
 * SHA-256 of the token presented: nothing is compared with a token itself, so how long the lookup
 * takes tells nothing of one (only of a digest, which an attacker cannot steer), and every token
 * costs the same. As the original, the literal prefix `"Bearer "` is stripped when present, and
 * otherwise the whole header is the token.
 */
export function principalResolver(
  entries: readonly TokenEntry[],
): (header: string | undefined) => Principal | undefined {
  const known = new Map(resolveTokens(entries).map((k) => [k.digest, k.principal]));
  return (header) => {
    const value = header ?? "";
    return known.get(digest(value.startsWith("Bearer ") ? value.slice("Bearer ".length) : value));
  };
}
