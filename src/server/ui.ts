import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Hono, MiddlewareHandler } from "hono";
import type { ServerEnv } from "./env.js";
import { pickEncoding, UiFiles } from "./ui-files.js";
import { CONSOLE_SECURITY_HEADERS } from "./ui-headers.js";

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

/** The console's options (`ServerOptions.ui`). */
export interface UiOptions {
  /** The directory of the console's build (`defaultConsoleDir()`). */
  dir: string;
  /** Serve `*.map` files (the bundle's source map). Default false: no public source map. */
  sourceMaps?: boolean;
}

/**
 * `/ui` → 301 `/ui/`, and the files under `/ui/` (index.html for the directory), each with the
 * console's security headers, compressed when the client accepts it (brotli, else gzip), with an
 * ETag, and cached for a year when its name carries a content hash (index.html: `no-cache`). With
 * the console off nothing is registered, so both fall through to the JSON 404.
 */
export function registerUi(app: Hono<ServerEnv>, ui: UiOptions | false | undefined): void {
  if (!ui) return;
  const files = new UiFiles(ui.dir);
  app.use("/ui", secured);
  app.use("/ui/*", secured);
  app.all("/ui", (c) => c.redirect("/ui/", 301));
  app.on(["GET", "HEAD"], "/ui/*", (c, next) => {
    const rel = decodeSafely(c.req.path.slice("/ui/".length));
    const file = rel === undefined || (!ui.sourceMaps && rel.endsWith(".map")) ? undefined : files.get(rel);
    if (!file) return next();
    const encoding = pickEncoding(file, c.req.header("accept-encoding"));
    const headers: Record<string, string> = {
      "Content-Type": file.type,
      "Cache-Control": file.cacheControl,
      ETag: file.etag,
    };
    if (file.br || file.gzip) headers.Vary = "Accept-Encoding";
    if (c.req.header("if-none-match") === file.etag) return c.body(null, 304, headers);
    const body = encoding ? file[encoding]! : file.body;
    if (encoding) headers["Content-Encoding"] = encoding;
    if (c.req.method === "HEAD") return c.body(null, 200, headers);
    return c.body(body as Uint8Array<ArrayBuffer>, 200, headers);
  });
}

/** Adds the console's security headers to whatever the route answers (a 404 included). */
const secured: MiddlewareHandler<ServerEnv> = async (c, next) => {
  await next();
  for (const [name, value] of Object.entries(CONSOLE_SECURITY_HEADERS)) c.res.headers.set(name, value);
};

function decodeSafely(path: string): string | undefined {
  try {
    return decodeURIComponent(path);
  } catch {
    return undefined;
  }
}
