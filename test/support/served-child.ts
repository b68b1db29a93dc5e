// `mqlite serve` as a real child process: the CLI compiled once (see test/cli/compiled.ts), so the
// many restarts of a crash loop start in well under a second.
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { compiledCli } from "../cli/compiled.js";

/** A served broker running in a child process. */
export interface ServedChild {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  readonly child: ChildProcess;
  /** Resolves with the exit code and signal once the process has ended. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** SIGKILL, then waits for the exit. */
  kill(): Promise<void>;
  /** SIGTERM (a graceful stop), then waits for the exit. */
  stop(): Promise<void>;
}

export interface ServedChildOptions {
  /** The database file. */
  db: string;
  /** The listening port; 0 (default) picks a free one. */
  port?: number;
  /** Bearer tokens (default none: auth off). */
  tokens?: string[];
  /** More environment (MQLITE_SYNC, MQLITE_MAX_MESSAGE_BYTES, ...). */
  env?: Record<string, string>;
  /** How long to wait for the banner. Default 30 s. */
  startTimeoutMs?: number;
  /** Runs the child under `prlimit` with this many file descriptors at most. */
  maxFiles?: number;
}

/** The environment without any ambient MQLITE_* setting. */
function cleanEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(([k, v]) => !k.startsWith("MQLITE_") && v !== undefined),
  ) as Record<string, string>;
}

/** A port that was free a moment ago (listen on 0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Starts `mqlite serve` on `127.0.0.1:<port>` over `db` and resolves once its banner names the URL
 * (the server then listens). The access log is off (level warn) so stdout stays small.
 */
export async function startServedChild(options: ServedChildOptions): Promise<ServedChild> {
  const env: Record<string, string> = {
    ...cleanEnv(),
    MQLITE_DB: options.db,
    MQLITE_ADDR: `127.0.0.1:${options.port ?? 0}`,
    MQLITE_TOKENS: options.tokens && options.tokens.length > 0 ? options.tokens.join(",") : "off",
    MQLITE_UI: "off",
    MQLITE_LOG_LEVEL: "warn",
    ...options.env,
  };
  const argv = [compiledCli(), "serve"];
  const child =
    options.maxFiles !== undefined
      ? spawn("prlimit", [`--nofile=${options.maxFiles}`, process.execPath, ...argv], {
          env,
          stdio: ["ignore", "pipe", "pipe"],
        })
      : spawn(process.execPath, argv, { env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const append = (d: Buffer) => {
    // Keep the head (the banner) and the tail (the last warnings) of a long run.
    out += d.toString("utf8");
    if (out.length > 256 * 1024) out = `${out.slice(0, 4096)}\n...\n${out.slice(-128 * 1024)}`;
  };
  child.stdout!.on("data", append);
  child.stderr!.on("data", append);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => resolve({ code, signal }));
  });
  const timeout = options.startTimeoutMs ?? 30_000;
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`mqlite serve did not start within ${timeout} ms:\n${out}`));
    }, timeout);
    const check = () => {
      const m = /serving .* at (http:\/\/[^\s]+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout!.off("data", check);
      resolve(m[1]!);
    };
    child.stdout!.on("data", check);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`mqlite serve exited (${code ?? signal}) before listening:\n${out}`));
    });
  });
  const port = Number(new URL(url).port);
  const wait = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return {
    url,
    port,
    pid: child.pid!,
    child,
    exited,
    output: () => out,
    kill: () => wait("SIGKILL"),
    stop: () => wait("SIGTERM"),
  };
}

/** The open file descriptors of a process (Linux /proc), or undefined where /proc is missing. */
export function openFds(pid: number): number | undefined {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return undefined;
  }
}

/** The resident set size of a process in bytes (Linux /proc), or undefined. */
export function rssBytes(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}
