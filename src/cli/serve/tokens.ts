import { randomBytes } from "node:crypto";
import { principalResolver } from "../../server/index.js";
import { CliError } from "../errors.js";

/** How `serve` authenticates, from `MQLITE_TOKENS`. */
export type TokenSetting =
  | { mode: "generated"; tokens: [string] }
  | { mode: "configured"; tokens: string[] }
  | { mode: "off"; tokens: [] };

/** A fresh token: `mqk_` and 128 random bits in hex. */
export function generateToken(): string {
  return `mqk_${randomBytes(16).toString("hex")}`;
}

/**
 * `MQLITE_TOKENS`: unset or empty → a generated token (secure by default); `off` (any case) → no
 * auth; otherwise comma-separated tokens, trimmed, blanks dropped, at least one required. Each is
 * `token`, `token=scope+scope` or `name:token=scope+scope`, checked here so a typo stops `serve`.
 */
export function parseTokens(value: string | undefined): TokenSetting {
  if (value === undefined || value === "") return { mode: "generated", tokens: [generateToken()] };
  if (value.trim().toLowerCase() === "off") return { mode: "off", tokens: [] };
  const tokens = value
    .split(",")
    .map((t) => t.trim())
    .filter((t) => t !== "");
  if (tokens.length === 0) {
    throw new CliError(
      'MQLITE_TOKENS has no usable token (give comma-separated tokens, or "off" to disable auth)',
    );
  }
  try {
    principalResolver(tokens);
  } catch (err) {
    throw new CliError(`MQLITE_TOKENS: ${(err as Error).message.replace(/^mqlite: /, "")}`);
  }
  return { mode: "configured", tokens };
}
