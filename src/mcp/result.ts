import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { MqliteError } from "../contract/errors.js";

/** A tool's answer: its JSON, as text. */
export function jsonResult(value: unknown): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value, null, 2) }] };
}

/** The error's wire code: a broker error keeps its own; a broker out of reach is `unavailable`. */
function codeOf(err: unknown): string {
  if (err instanceof MqliteError) return err.code;
  if (err instanceof TypeError && err.message === "fetch failed") return "unavailable";
  return "internal";
}

function messageOf(err: unknown): string {
  if (err instanceof TypeError && err.message === "fetch failed" && err.cause instanceof Error)
    return `cannot reach the broker: ${err.cause.message}`;
  return err instanceof Error ? err.message : String(err);
}

/** A failed call, reported to the agent as `isError` with the error envelope `{code, message}`. */
export function errorResult(err: unknown): CallToolResult {
  return {
    isError: true,
    content: [{ type: "text", text: JSON.stringify({ code: codeOf(err), message: messageOf(err) }) }],
  };
}
