import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root. */
export const root = join(dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * The environment a user's shell would give a command: no MQLITE_* setting, and none of the npm_*
 * variables `npm test` exports to its script (a nested npm would read them as its configuration,
 * e.g. a silent log level or the outer project's prefix).
 */
export function shellEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k.startsWith("MQLITE_") || /^npm_/i.test(k) || k === "INIT_CWD") continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs a command to its end and collects its output; a command still running after `timeoutMs` is killed. */
export function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: Record<string, string>; timeoutMs: number },
): Promise<Finished> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? shellEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(new Error(`${command} ${args.join(" ")} could not start: ${err.message}`));
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started });
    });
  });
}

/** Fails with the command's output when it did not exit with status 0. */
export function succeeded(what: string, r: Finished): Finished {
  if (r.code !== 0)
    throw new Error(
      `${what} exited with ${r.code ?? r.signal}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`,
    );
  return r;
}

/** A long-running command (a served broker): its output so far, and its end. */
export interface Running {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Waits for `running` to end and fails unless it exited with status 0 (or, when given, was ended
 * by `orEndedBy`). The failure names the status first and then the output's last lines, so a
 * truncated report still shows why.
 */
export async function exitsCleanly(running: Running, orEndedBy?: NodeJS.Signals): Promise<void> {
  const exit = await running.exited;
  if (exit.code === 0 && exit.signal === null) return;
  if (orEndedBy !== undefined && exit.code === null && exit.signal === orEndedBy) return;
  const tail = running.output().trimEnd().split("\n").slice(-20).join("\n");
  throw new Error(`exited with ${exit.code ?? exit.signal}, not 0; its last output:\n${tail}`);
}

/**
 * Starts a long-running command in a process group of its own, so a test can signal it alone
 * (`child.kill`) or signal its whole group the way a terminal's Ctrl-C does.
 */
export function start(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string> },
) {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout!.on("data", (d) => {
    output += d;
  });
  child.stderr!.on("data", (d) => {
    output += d;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => output, exited } satisfies Running;
}

/** Waits until the output matches `pattern`; fails with the output so far after `ms`. */
export async function waitFor(running: Running, pattern: RegExp, ms: number): Promise<RegExpMatchArray> {
  const deadline = Date.now() + ms;
  for (;;) {
    const m = running.output().match(pattern);
    if (m) return m;
    if (running.child.exitCode !== null || running.child.signalCode !== null)
      throw new Error(
        `exited (${running.child.exitCode ?? running.child.signalCode}) before ${pattern}:\n${running.output()}`,
      );
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${pattern}; output:\n${running.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The URL and generated token a served broker prints at start. */
export async function banner(running: Running, ms: number): Promise<{ url: string; token: string }> {
  const [, url] = await waitFor(running, /serving .* at (http:\/\/127\.0\.0\.1:\d+)/, ms);
  const [, token] = await waitFor(running, /token: (mqk_[0-9a-f]+) \(generated/, ms);
  return { url: url!, token: token! };
}

/** A POST of one RPC of the HTTP API; fails on anything but 200. */
export async function rpc<T>(url: string, token: string, route: string, body: unknown): Promise<T> {
  const res = await fetch(`${url}/mqlite.v1.${route}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${route}: HTTP ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** Whether something can listen on 127.0.0.1:`port` right now (nothing holds it). */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** A port that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export const base64 = (s: string) => Buffer.from(s).toString("base64");
export const text = (b64: string) => Buffer.from(b64, "base64").toString();

/** Kills what is left of a started command's process group (its npm, shell and node alike). */
export function killGroup(running: Running): void {
  try {
    process.kill(-running.child.pid!, "SIGKILL");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ESRCH") throw err; // ESRCH: the group is gone already
  }
}
