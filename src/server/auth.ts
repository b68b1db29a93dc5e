import { hash, timingSafeEqual } from "node:crypto";

/** Paths that need no token: exactly `/`, `/healthz`, `/readyz`, `/ui`, and everything under `/ui/`. */
export function isOpenPath(path: string): boolean {
  return (
    path === "/" || path === "/healthz" || path === "/readyz" || path === "/ui" || path.startsWith("/ui/")
  );
}

/** One-shot (no Hash object): half the cost of `createHash`, paid on every request. */
const digest = (token: string) => hash("sha256", token, "buffer");

/**
 * Checks `Authorization: Bearer <token>` against every configured token in constant time
 * (equal-length digests, no early exit). As the original, the literal prefix `"Bearer "` is
 * stripped when present, and otherwise the whole header is taken as the token.
 */
export function tokenChecker(tokens: readonly string[]): (header: string | undefined) => boolean {
  const digests = tokens.map(digest);
  return (header) => {
    const value = header ?? "";
    const presented = digest(value.startsWith("Bearer ") ? value.slice("Bearer ".length) : value);
    let ok = false;
    for (const d of digests) ok = timingSafeEqual(presented, d) || ok;
    return ok;
  };
}
