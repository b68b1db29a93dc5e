import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { MqliteError } from "../contract/errors.js";
import { messageOf } from "../contract/message-of.js";

/** A tool's answer: its JSON, as text. */
export function jsonResult(value: unknown): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value, null, 2) }] };
}

/** The error's wire code: a broker error (`unavailable` for a broker out of reach) keeps its own. */
function codeOf(err: unknown): string {
  return err instanceof MqliteError ? err.code : "internal";
}

/** A failed call, reported to the agent as `isError` with the error envelope `{code, message}`. */
export function errorResult(err: unknown): CallToolResult {
  return {
    isError: true,
    content: [{ type: "text", text: JSON.stringify({ code: codeOf(err), message: messageOf(err) }) }],
  };
}
