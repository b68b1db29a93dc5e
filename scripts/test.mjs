#!/usr/bin/env node
// Runs every test file under test/ with node:test through tsx.
// Usage: node scripts/test.mjs [substring filter...]
// Node 20's --test does not expand globs, so the files are collected here.
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

function collect(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...collect(path));
    else if (name.endsWith(".test.ts")) out.push(path);
  }
  return out;
}

const filters = process.argv.slice(2);
const files = collect("test")
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
  .sort();
if (files.length === 0) {
  console.error("no test files matched");
  process.exit(1);
}
const concurrency = process.env.TEST_CONCURRENCY ?? "2";
const result = spawnSync(
  process.execPath,
  ["--import", "tsx", "--test", `--test-concurrency=${concurrency}`, ...files],
  { stdio: "inherit" },
);
process.exit(result.status ?? 1);
