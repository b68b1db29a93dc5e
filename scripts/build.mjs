#!/usr/bin/env node
// Builds what the package ships and `npm start` runs: dist/ (JavaScript and declarations from
// tsconfig.build.json) and the console's bundle in dist/console/dist.
//
//   node scripts/build.mjs             build (npm run build, and prepack before npm pack/publish)
//   node scripts/build.mjs --if-stale  build only when a source is newer than the last build (prestart)
//
// dist/ is removed first, so a module deleted from src/ never lingers in a package, and the stamp
// dist/.build-stamp is written last, so its presence means a complete build.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(root, "dist");
const stamp = join(dist, ".build-stamp");
const inputs = ["src", "package.json", "tsconfig.json", "tsconfig.build.json", "scripts/build.mjs"];

/** The newest modification time under `path` (a file or a directory). */
function newest(path) {
  const info = statSync(path);
  if (!info.isDirectory()) return info.mtimeMs;
  let latest = info.mtimeMs;
  for (const name of readdirSync(path)) {
    // The console's own build output is not a source.
    if (path === join(root, "src", "console") && name === "dist") continue;
    latest = Math.max(latest, newest(join(path, name)));
  }
  return latest;
}

function isStale() {
  if (!existsSync(stamp)) return true;
  const built = statSync(stamp).mtimeMs;
  return inputs.some((input) => newest(join(root, input)) > built);
}

function run(args) {
  const result = spawnSync(process.execPath, args, { cwd: root, stdio: "inherit" });
  if (result.status !== 0) {
    console.error(`build failed: node ${args.join(" ")} exited with ${result.status ?? result.signal}`);
    process.exit(1);
  }
}

if (process.argv.includes("--if-stale") && !isStale()) {
  console.log("build: dist/ is up to date");
} else {
  const started = Date.now();
  rmSync(dist, { recursive: true, force: true });
  run([join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"]);
  run(["--import", "tsx", "src/console/build.ts", "--out", "dist/console/dist"]);
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
  console.log(`build: dist/ built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
