/**
 * Builds the console into `src/console/dist`: index.html naming `app-<hash>.js` and
 * `styles-<hash>.css` (content-hashed names, so the server caches them for a year), each text file
 * also as `.br` and `.gz` (the server answers those to clients that accept them), and the bundle's
 * source map `app-<hash>.js.map`, which the server keeps private unless told otherwise. One esbuild
 * bundle of the preact + htm app, no CDN at run time.
 *
 *   tsx src/console/build.ts              build
 *   tsx src/console/build.ts --if-stale   build only when dist is missing or older than a source
 *   tsx src/console/build.ts --out DIR    build elsewhere (a package's dist/console/dist)
 *
 * It runs on `npm install` (prepare) and before `npm start` (--if-stale). Each file is written to a
 * temporary name and renamed, so a server reading dist never sees half a file, and builds racing
 * each other (test files in parallel) leave the same result.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, gzipSync, constants as zlib } from "node:zlib";
import { build } from "esbuild";

const here = dirname(fileURLToPath(import.meta.url));
export const CONSOLE_SRC = join(here, "app");
export const CONSOLE_DIST = join(here, "dist");
const SRC_ROOT = resolve(here, "..");

/** Every source the bundle depends on: the app, and the shared modules it imports. */
function sources(): string[] {
  const out: string[] = [join(here, "build.ts")];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else out.push(path);
    }
  };
  walk(CONSOLE_SRC);
  out.push(
    join(SRC_ROOT, "jobs/job-record.ts"),
    join(SRC_ROOT, "jobs/naming.ts"),
    join(SRC_ROOT, "jobs/errors.ts"),
  );
  return out;
}

const mtime = (path: string) => {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return -1;
  }
};

/** The files a built index.html names (`./app-<hash>.js`, `./styles-<hash>.css`). */
export function referencedAssets(html: string): string[] {
  return [...html.matchAll(/(?:src|href)="\.\/([^"/]+)"/g)].map((m) => m[1]!);
}

/** True when dist is missing a file or older than a source. */
export function consoleIsStale(outDir = CONSOLE_DIST): boolean {
  let html: string;
  try {
    html = readFileSync(join(outDir, "index.html"), "utf8");
  } catch {
    return true;
  }
  const assets = referencedAssets(html);
  if (!assets.some((a) => a.endsWith(".js"))) return true; // an older build's plain names
  const built = Math.min(...["index.html", ...assets].map((f) => mtime(join(outDir, f))));
  if (built < 0) return true;
  return sources().some((s) => mtime(s) > built);
}

function writeAtomic(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, path);
}

/** Writes a text file with its brotli and gzip forms (written first: the plain file's mtime is the newest). */
function writeCompressed(path: string, data: Uint8Array): void {
  writeAtomic(`${path}.br`, brotliCompressSync(data, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11 } }));
  writeAtomic(`${path}.gz`, gzipSync(data, { level: 9 }));
  writeAtomic(path, data);
}

/** `styles.css` → `styles-<8 base32 characters of its sha256>.css`, as esbuild names the bundle. */
function hashedName(name: string, data: Uint8Array): string {
  const digest = createHash("sha256").update(data).digest("hex").slice(0, 10);
  const hash = BigInt(`0x${digest}`).toString(32).toUpperCase().padStart(8, "0").slice(0, 8);
  return name.replace(/(\.[a-z]+)$/, `-${hash}$1`);
}

/** Files of earlier builds: hashed assets, their compressed forms and maps, and the old plain names. */
const BUILT =
  /^(?:app|styles)(?:-[A-Za-z0-9]+)?\.(?:js|css)(?:\.map)?(?:\.br|\.gz)?$|^index\.html\.(?:br|gz)$/;

/**
 * Bundles the app (minified, with an external source map no file links to) under a hashed name,
 * copies the stylesheet under a hashed name, writes index.html naming both, precompresses every
 * text file, then removes what earlier builds left.
 */
export async function buildConsole(outDir = CONSOLE_DIST): Promise<{ outDir: string; bytes: number }> {
  mkdirSync(outDir, { recursive: true });
  const result = await build({
    entryPoints: { app: join(CONSOLE_SRC, "main.ts") },
    bundle: true,
    format: "esm",
    target: ["chrome111", "firefox113", "safari16.4"],
    minify: true,
    sourcemap: "external",
    legalComments: "none",
    write: false,
    outdir: outDir,
    entryNames: "[name]-[hash]",
    logLevel: "silent",
  });
  let bytes = 0;
  const written = new Set<string>(["index.html"]);
  let script: string | undefined;
  for (const file of result.outputFiles) {
    const name = basename(file.path);
    if (name.endsWith(".map")) writeAtomic(file.path, file.contents);
    else writeCompressed(file.path, file.contents);
    if (name.endsWith(".js")) script = name;
    written.add(name);
    bytes += file.contents.length;
  }
  if (!script) throw new Error("console build: esbuild wrote no script");
  const css = readFileSync(join(CONSOLE_SRC, "styles.css"));
  const stylesheet = hashedName("styles.css", css);
  writeCompressed(join(outDir, stylesheet), css);
  written.add(stylesheet);
  const page = readFileSync(join(CONSOLE_SRC, "index.html"), "utf8");
  const html = page
    .replace('src="./app.js"', `src="./${script}"`)
    .replace('href="./styles.css"', `href="./${stylesheet}"`);
  if (!referencedAssets(html).includes(script) || !referencedAssets(html).includes(stylesheet))
    throw new Error('console build: index.html must load "./app.js" and "./styles.css"');
  // Last, so that a complete index.html means a complete build.
  writeCompressed(join(outDir, "index.html"), Buffer.from(html));
  for (const name of readdirSync(outDir)) {
    const keep = written.has(name) || written.has(name.replace(/\.(?:br|gz)$/, ""));
    if (!keep && BUILT.test(name)) rmSync(join(outDir, name), { force: true });
  }
  return { outDir, bytes };
}

/** Builds when stale; resolves to whether it built. */
export async function ensureConsoleBuilt(outDir = CONSOLE_DIST): Promise<boolean> {
  if (!consoleIsStale(outDir)) return false;
  await buildConsole(outDir);
  return true;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const at = args.indexOf("--out");
  const outDir = at >= 0 && args[at + 1] ? resolve(args[at + 1]!) : CONSOLE_DIST;
  if (args.includes("--if-stale") && !consoleIsStale(outDir)) {
    process.stdout.write(`console: ${outDir} is up to date\n`);
  } else {
    const { bytes } = await buildConsole(outDir);
    process.stdout.write(`console: built ${outDir} (${Math.round(bytes / 1024)} KiB)\n`);
  }
}
