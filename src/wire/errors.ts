import { z } from "zod";
import { errorFromCode, type MqliteError } from "../contract/errors.js";
import { messageOf } from "../contract/message-of.js";

/** Every error response: `{"code":"not_found","message":"..."}`. */
export const ErrorBody = z.strictObject({ code: z.string(), message: z.string() }).meta({ id: "Error" });
export type ErrorBody = z.infer<typeof ErrorBody>;

/** The wire status and body of any thrown value: a named error keeps its code, the rest is 500 `internal`. */
export function errorToWire(err: unknown): { status: number; body: ErrorBody } {
  const e = err as { code?: unknown; status?: unknown; message?: unknown } | null;
  if (e && typeof e.code === "string" && typeof e.status === "number" && e.status >= 400 && e.status <= 599) {
    return { status: e.status, body: { code: e.code, message: String(e.message ?? "") } };
  }
  const message = messageOf(err);
  return { status: 500, body: { code: "internal", message } };
}

/** The wire code a status implies, for error answers without a JSON body (a proxy's 413, say). */
const codeByStatus: Record<number, string> = {
  400: "invalid_argument",
  401: "unauthenticated",
  403: "permission_denied",
  404: "not_found",
  405: "unimplemented",
  413: "message_too_large",
  415: "invalid_argument",
  429: "resource_exhausted",
  499: "canceled",
};

/** Rebuilds the named error of an error answer (the client's side of `errorToWire`). */
export function errorFromWire(status: number, text: string): MqliteError {
  try {
    const body = JSON.parse(text) as Partial<ErrorBody>;
    if (typeof body.code === "string") return errorFromCode(body.code, String(body.message ?? ""));
  } catch {
    // not JSON: fall back to the status
  }
  return errorFromCode(codeByStatus[status] ?? "internal", `HTTP ${status}: ${text.trim().slice(0, 200)}`);
}
