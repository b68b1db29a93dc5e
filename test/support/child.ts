import { type ChildProcess, spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

/** Node flags that make TypeScript importable in a child (those of this process, minus the test runner's). */
function loaderFlags(): string[] {
  const flags = process.execArgv.filter((a) => !a.startsWith("--test"));
  return flags.some((f) => f.includes("tsx")) ? flags : [...flags, "--import", "tsx"];
}

/** Starts `test/support/<script>` as a real child process with piped stdio. */
export function spawnChild(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  stdin: "ignore" | "pipe" = "ignore",
): ChildProcess {
  return spawn(process.execPath, [...loaderFlags(), join(here, script), ...args], {
    stdio: [stdin, "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
}

/** Collects a child's stdout lines and resolves with them (and its exit status) when it ends. */
export function collectLines(
  child: ChildProcess,
  onLine?: (line: string) => void,
): Promise<{ lines: string[]; code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  const lines: string[] = [];
  let buffer = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8");
  child.stdout?.on("data", (chunk: string) => {
    buffer += chunk;
    let nl = buffer.indexOf("\n");
    while (nl >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      lines.push(line);
      onLine?.(line);
      nl = buffer.indexOf("\n");
    }
  });
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve) => {
    child.on("close", (code, signal) => resolve({ lines, code, signal, stderr }));
  });
}
