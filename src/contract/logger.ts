/** The logging the engine does (pino-compatible: `logger.warn({ ...fields }, "message")`). */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  /** Whether lines of `level` are written (pino's); without it every level is assumed on. */
  isLevelEnabled?(level: "debug" | "info" | "warn" | "error"): boolean;
}

/** The default: warnings and errors to stderr as one JSON line each; nothing else. */
export const stderrLogger: Logger = {
  debug() {},
  info() {},
  warn(obj, msg) {
    process.stderr.write(`${JSON.stringify({ level: "warn", msg, ...obj })}\n`);
  },
  error(obj, msg) {
    process.stderr.write(`${JSON.stringify({ level: "error", msg, ...obj })}\n`);
  },
  isLevelEnabled: (level) => level === "warn" || level === "error",
};

/** Discards everything. */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  isLevelEnabled: () => false,
};
