/**
 * Builds the console into `src/console/dist` (index.html, app.js, styles.css): one esbuild bundle
 * of the preact + htm app, no CDN at run time.
 *
 *   tsx src/console/build.ts              build
 *   tsx src/console/build.ts --if-stale   build only when dist is missing or older than a source
 *   tsx src/console/build.ts --out DIR    build elsewhere (a package's dist/console/dist)
 *
 * It runs on `npm install` (prepare) and before `npm start` (--if-stale). Each file is written to a
 * temporary name and renamed, so a server reading dist never sees half a file, and builds racing
 * each other (test files in parallel) leave the same result.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
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

/** True when dist is missing a file or older than a source. */
export function consoleIsStale(outDir = CONSOLE_DIST): boolean {
  const built = Math.min(...["index.html", "app.js", "styles.css"].map((f) => mtime(join(outDir, f))));
  if (built < 0) return true;
  return sources().some((s) => mtime(s) > built);
}

function writeAtomic(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, path);
}

/** Bundles the app (minified, with a source map) and copies the page and the stylesheet. */
export async function buildConsole(outDir = CONSOLE_DIST): Promise<{ outDir: string; bytes: number }> {
  mkdirSync(outDir, { recursive: true });
  const result = await build({
    entryPoints: [join(CONSOLE_SRC, "main.ts")],
    bundle: true,
    format: "esm",
    target: ["chrome111", "firefox113", "safari16.4"],
    minify: true,
    sourcemap: "external",
    legalComments: "none",
    write: false,
    outfile: join(outDir, "app.js"),
    logLevel: "silent",
  });
  let bytes = 0;
  for (const file of result.outputFiles) {
    writeAtomic(file.path, file.contents);
    bytes += file.contents.length;
  }
  writeAtomic(join(outDir, "styles.css"), readFileSync(join(CONSOLE_SRC, "styles.css")));
  // Last, so that a complete index.html means a complete build.
  writeAtomic(join(outDir, "index.html"), readFileSync(join(CONSOLE_SRC, "index.html")));
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
