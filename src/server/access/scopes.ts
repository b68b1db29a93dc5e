import { InvalidArgumentError } from "../../contract/errors.js";

/**
 * What a token may do. `manage`: everything. `monitor`: read-only views (lists, counts, status,
 * /metrics, the console's live feed), never a message body. `send:<glob>`: send, schedule and
 * cancel on matching queues, publish to matching topics. `listen:<glob>`: receive, peek, settle
 * and renew on matching queues, read matching topic logs.
 */
export type Scope =
  | { kind: "manage" }
  | { kind: "monitor" }
  | { kind: "send"; glob: string; match: (name: string) => boolean }
  | { kind: "listen"; glob: string; match: (name: string) => boolean };

export type ScopeKind = Scope["kind"];

/** The longest glob a scope may carry (names are at most 256 characters). */
export const MAX_GLOB_LENGTH = 256;

/**
 * A name glob: `*` matches any run of characters (none included), `?` exactly one; everything
 * else matches itself. Compiled to an anchored regular expression once, at startup.
 */
export function compileGlob(glob: string): (name: string) => boolean {
  const source = Array.from(glob, (ch) =>
    ch === "*" ? ".*" : ch === "?" ? "." : ch.replace(/[\\^$.|+()[\]{}]/g, "\\$&"),
  ).join("");
  const re = new RegExp(`^${source}$`, "su");
  return (name) => re.test(name);
}

/** Parses one scope (`manage`, `monitor`, `send:<glob>`, `listen:<glob>`). */
export function parseScope(text: string): Scope {
  if (text === "manage" || text === "monitor") return { kind: text };
  const colon = text.indexOf(":");
  const kind = colon < 0 ? text : text.slice(0, colon);
  if ((kind === "send" || kind === "listen") && colon > 0) {
    const glob = text.slice(colon + 1);
    if (glob === "" || glob.length > MAX_GLOB_LENGTH) {
      throw new InvalidArgumentError(
        `mqlite: scope "${text}" needs a glob of 1 to ${MAX_GLOB_LENGTH} characters after "${kind}:"`,
      );
    }
    return { kind, glob, match: compileGlob(glob) };
  }
  throw new InvalidArgumentError(
    `mqlite: unknown scope "${text}" (expected manage, monitor, send:<glob> or listen:<glob>)`,
  );
}

/** The text form of a scope, as configured. */
export function scopeText(scope: Scope): string {
  return scope.kind === "send" || scope.kind === "listen" ? `${scope.kind}:${scope.glob}` : scope.kind;
}

/** What one call needs: a scope kind, and for send and listen the queue or topic names it touches. */
export type Need =
  | { kind: "manage" }
  | { kind: "monitor" }
  | { kind: "send" | "listen"; names: readonly string[] }
  /** Any send or listen scope at all (a worker's or producer's housekeeping calls). */
  | { kind: "client" };

/** Whether `scopes` cover `need`. `manage` covers everything; `monitor` only its own reads. */
export function covers(scopes: readonly Scope[], need: Need): boolean {
  if (scopes.some((s) => s.kind === "manage")) return true;
  switch (need.kind) {
    case "manage":
      return false;
    case "monitor":
      return scopes.some((s) => s.kind === "monitor");
    case "client":
      return scopes.some((s) => s.kind === "send" || s.kind === "listen");
    default:
      // No name at all (every queue) is beyond any glob: only `manage` covers it.
      return (
        need.names.length > 0 &&
        need.names.every((name) => scopes.some((s) => s.kind === need.kind && s.match(name)))
      );
  }
}

/** The scope a refusal names: the first name no scope of the needed kind matches. */
export function missingScope(scopes: readonly Scope[], need: Need): string {
  switch (need.kind) {
    case "manage":
    case "monitor":
      return need.kind;
    case "client":
      return "send:<glob> or listen:<glob>";
    default: {
      const name = need.names.find((n) => !scopes.some((s) => s.kind === need.kind && s.match(n)));
      return `${need.kind}:${name ?? "*"}`;
    }
  }
}
