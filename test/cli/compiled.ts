import { copyFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [path] : [];
  });
}

let built: string | undefined;

/**
 * The CLI compiled to plain JavaScript, file by file with the compiler tsx uses (esbuild), so the
 * many child processes of the CLI tests start without the TypeScript loader (several times
 * faster on a busy machine). The output lives under node_modules/.cache, where packages resolve,
 * and is removed when this process exits. One test (bin.test.ts) runs the real bin shim instead.
 */
export function compiledCli(): string {
  if (built) return built;
  const out = join(root, "node_modules/.cache/mqlite-cli-test", String(process.pid));
  rmSync(out, { recursive: true, force: true });
  buildSync({
    entryPoints: sources(join(root, "src")),
    outdir: join(out, "src"),
    outbase: join(root, "src"),
    format: "esm",
    platform: "node",
    target: "node20",
    logLevel: "silent",
  });
  // src/version.ts reads ../package.json.
  copyFileSync(join(root, "package.json"), join(out, "package.json"));
  process.on("exit", () => rmSync(out, { recursive: true, force: true }));
  built = join(out, "src/cli/main.js");
  return built;
}
