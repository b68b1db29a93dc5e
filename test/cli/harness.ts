import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Broker } from "../../src/contract/broker.js";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { compiledCli } from "./compiled.js";

/** The repository's root. */
export const root = join(dirname(fileURLToPath(import.meta.url)), "../..");

/** The environment without any ambient MQLITE_* setting. */
export function cleanEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(([k, v]) => !k.startsWith("MQLITE_") && v !== undefined),
  ) as Record<string, string>;
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  env?: Record<string, string>;
  /** Written to stdin, then closed (stdin is empty otherwise). */
  input?: string | Buffer;
  /** `closed`: stdout is closed (`>&-`); `full`: stdout is /dev/full (every write fails). */
  stdout?: "pipe" | "closed" | "full";
  /** The working directory (where `./mq.db` is). */
  cwd?: string;
}

/** Runs `mqlite <args>` as a child process (compiled once, see compiled.ts) and collects its output. */
export function cli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const argv = [compiledCli(), ...args];
  const redirect = options.stdout === "closed" ? ">&-" : options.stdout === "full" ? ">/dev/full" : undefined;
  const child = redirect
    ? spawn("/bin/sh", ["-c", `exec "$0" "$@" ${redirect}`, process.execPath, ...argv], {
        env: { ...cleanEnv(), ...options.env },
        stdio: ["pipe", "ignore", "pipe"],
        ...(options.cwd && { cwd: options.cwd }),
      })
    : spawn(process.execPath, argv, {
        env: { ...cleanEnv(), ...options.env },
        ...(options.cwd && { cwd: options.cwd }),
        stdio: ["pipe", "pipe", "pipe"],
      });
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
  });
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  child.stdin.on("error", () => {}); // the command may exit before reading its input
  child.stdin.end(options.input ?? "");
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs a command that must succeed; its output otherwise explains the failure. */
export async function ok(args: string[], options: CliOptions = {}): Promise<string> {
  const r = await cli(args, options);
  if (r.code !== 0) throw new Error(`mqlite ${args.join(" ")} exited ${r.code}\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** Runs a command that must succeed and parses its JSON output (`--output json`, or `format`). */
export async function okJson(
  args: string[],
  options: CliOptions = {},
  format: "json" | "wire" = "json",
): Promise<any> {
  return JSON.parse(await ok([...args, "--output", format], options));
}

export const TOKEN = "cli-test-token";

/** A broker served in this process on a free loopback port, with a known token. */
export interface Served {
  url: string;
  broker: Broker;
  close(): Promise<void>;
}

export async function serveInProcess(): Promise<Served> {
  const broker = await openBroker(":memory:", { logger: silentLogger });
  const server: RunningServer = await startServer({
    broker,
    port: 0,
    tokens: [TOKEN],
    logger: silentLogger,
    graceMs: 1000,
  });
  return { url: server.url, broker, close: () => server.close() };
}

/** Polls until `check` passes (background loops settle things within about a second). */
export async function eventually(check: () => Promise<void>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
