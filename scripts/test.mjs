#!/usr/bin/env node
// Runs every test file under test/ with node:test through tsx.
// Usage: node scripts/test.mjs [--soak] [substring filter...]
// Env: TEST_CONCURRENCY (files at once), TEST_TIMEOUT_MS (a test's and a file's longest run).
// With --soak it runs the long forms instead: the files named *.soak.ts (npm run test:soak).
// Node 20's --test does not expand globs, so the files are collected here.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";

/**
 * The console's end-to-end tests drive Debian's Chromium. When one of them is selected and
 * /usr/bin/chromium is missing, install it (non-interactive apt-get, as root), and stop loudly if
 * that fails.
 */
function ensureChromium(selected) {
  const CHROMIUM = "/usr/bin/chromium";
  if (!selected.some((f) => f.startsWith(join("test", "console"))) || existsSync(CHROMIUM)) return;
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const apt = (args) => {
    console.log(`console tests: ${CHROMIUM} is missing; running: apt-get ${args.join(" ")}`);
    return spawnSync("apt-get", args, { stdio: "inherit", env }).status === 0;
  };
  const install = ["install", "-y", "chromium"];
  const ok = apt(install) || (apt(["update"]) && apt(install));
  if (!ok || !existsSync(CHROMIUM)) {
    console.error(
      `console tests: could not install Chromium (apt-get install -y chromium failed); ${CHROMIUM} is required`,
    );
    process.exit(1);
  }
}

const argv = process.argv.slice(2);
const soak = argv.includes("--soak");
const suffix = soak ? ".soak.ts" : ".test.ts";

function collect(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...collect(path));
    else if (name.endsWith(suffix)) out.push(path);
  }
  return out;
}

const filters = argv.filter((a) => a !== "--soak");
const files = collect("test")
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
  .sort();
if (files.length === 0) {
  console.error("no test files matched");
  process.exit(1);
}
ensureChromium(files);
// The long forms measure growth and latency over minutes: one file at a time unless asked otherwise.
// Otherwise one file more than the machine has cores: most files spend much of their time waiting
// (on child processes, servers, Chromium, timers), and on two cores three at once ran the suite in
// 10 minutes where two took 15-16.
const concurrency = process.env.TEST_CONCURRENCY ?? String(soak ? 1 : availableParallelism() + 1);
// A hang fails loudly instead of stalling the run: node:test's timeout bounds each test and each
// file's process (a file whose tests passed but whose process never exits is cancelled, named,
// and the run fails). Most files take seconds; the release tests install the package with npm,
// minutes on a busy machine (their own commands are bounded at 10); the long forms run for minutes.
const timeoutMs = process.env.TEST_TIMEOUT_MS ?? (soak ? "1800000" : "720000");
const result = spawnSync(
  process.execPath,
  ["--import", "tsx", "--test", `--test-concurrency=${concurrency}`, `--test-timeout=${timeoutMs}`, ...files],
  { stdio: "inherit" },
);
process.exit(result.status ?? 1);
