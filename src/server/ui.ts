import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { serveStatic } from "@hono/node-server/serve-static";
import type { Hono } from "hono";
import type { ServerEnv } from "./env.js";

/**
 * The console's files: a build under `src/console/dist` (or `dist/console` in a package) when there
 * is one, else the placeholder page in `src/console/placeholder`.
 */
export function defaultConsoleDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [
    join(here, "../console/dist"),
    join(here, "../../src/console/dist"),
    join(here, "../console/placeholder"),
  ];
  return candidates.find((dir) => existsSync(join(dir, "index.html"))) ?? candidates[candidates.length - 1]!;
}

/**
 * `/ui` → 301 `/ui/`, and the static files under `/ui/` (index.html for the directory). With the
 * console off nothing is registered, so both fall through to the JSON 404.
 */
export function registerUi(app: Hono<ServerEnv>, ui: { dir: string } | false | undefined): void {
  if (!ui) return;
  app.all("/ui", (c) => c.redirect("/ui/", 301));
  app.use(
    "/ui/*",
    serveStatic({ root: ui.dir, rewriteRequestPath: (path) => path.slice("/ui".length) || "/" }),
  );
}
