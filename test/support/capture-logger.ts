import type { Logger } from "../../src/contract/logger.js";

/** A line a `captureLogger` was given. */
export interface LoggedLine {
  level: "debug" | "info" | "warn" | "error";
  /** The fields logged: whatever the code under test passed. */
  obj: Record<string, unknown>;
  msg?: string;
}

/** A logger that keeps every line it is given, with its level, for a test to read. */
export interface CapturingLogger extends Logger {
  readonly lines: LoggedLine[];
  /** The lines of warn level and above. */
  problems(): LoggedLine[];
}

export function captureLogger(): CapturingLogger {
  const lines: LoggedLine[] = [];
  const at =
    (level: LoggedLine["level"]) =>
    (obj: object, msg?: string): void => {
      lines.push({ level, obj: obj as Record<string, unknown>, msg });
    };
  return {
    lines,
    problems: () => lines.filter((l) => l.level === "warn" || l.level === "error"),
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
  };
}
