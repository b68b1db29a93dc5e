import { principalResolver } from "./access/tokens.js";

/** Paths that need no token: exactly `/`, `/healthz`, `/readyz`, `/ui`, and everything under `/ui/`. */
export function isOpenPath(path: string): boolean {
  return (
    path === "/" || path === "/healthz" || path === "/readyz" || path === "/ui" || path.startsWith("/ui/")
  );
}

/**
 * Checks `Authorization: Bearer <token>` against the configured tokens, as the server's auth does
 * (`principalResolver`: by the presented token's digest, the `"Bearer "` prefix optional).
 */
export function tokenChecker(tokens: readonly string[]): (header: string | undefined) => boolean {
  const resolve = principalResolver(tokens.map((token) => ({ token })));
  return (header) => resolve(header) !== undefined;
}
