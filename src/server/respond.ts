import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { encodeJson, errorToWire } from "../wire/index.js";
import type { AccessFields, ServerEnv } from "./env.js";

/** Merges fields into the request's access-log record. */
export function note(c: Context<ServerEnv>, fields: AccessFields): void {
  const access = c.get("access");
  if (access) Object.assign(access, fields);
  else c.set("access", { ...fields });
}

/** A JSON answer as Go's encoder writes it: compact, trailing newline, `application/json`. */
export function json(c: Context<ServerEnv>, status: number, body: unknown): Response {
  return c.body(encodeJson(body), status as ContentfulStatusCode, { "Content-Type": "application/json" });
}

/** The `{"code","message"}` answer of any thrown value (unknown errors are 500 `internal`). */
export function errorJson(c: Context<ServerEnv>, err: unknown): Response {
  const { status, body } = errorToWire(err);
  note(c, { code: body.code });
  return json(c, status, body);
}
