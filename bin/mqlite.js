#!/usr/bin/env node
// The `mqlite` executable. In a checkout (src/ present) it runs the TypeScript sources through tsx,
// so it is never stale and needs no build; in the published package (dist/ only) the built CLI.
import { existsSync } from "node:fs";

const source = new URL("../src/cli/main.ts", import.meta.url);
if (existsSync(source)) {
  const { register } = await import("tsx/esm/api");
  register();
  await import(source.href);
} else {
  await import(new URL("../dist/cli/main.js", import.meta.url).href);
}
