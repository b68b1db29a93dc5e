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

const JSON_HEADERS = { "Content-Type": "application/json" } as const;

/**
 * `JSON_HEADERS` with a server's CORS headers, merged once: a server has one CORS header object,
 * and @hono/node-server copies a plain header object before changing it, so answers can share it.
 */
let corsOf: Readonly<Record<string, string>> | undefined;
let jsonWithCors: Readonly<Record<string, string>> = JSON_HEADERS;
function jsonHeadersWith(cors: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
  if (cors !== corsOf) {
    corsOf = cors;
    jsonWithCors = { ...JSON_HEADERS, ...cors };
  }
  return jsonWithCors;
}

/**
 * A JSON answer as Go's encoder writes it: compact, trailing newline, `application/json`; with the
 * request's CORS headers (see `ServerEnv`) and `extra` ones.
 */
export function json(
  c: Context<ServerEnv>,
  status: number,
  body: unknown,
  extra?: Record<string, string>,
): Response {
  const text = encodeJson(body);
  const headers = extra ? { "Content-Type": "application/json", ...extra } : JSON_HEADERS;
  const cors = c.get("cors");
  // Off the RPC path, headers may have been set on the context: hono merges them.
  if (cors === undefined) return c.body(text, status as ContentfulStatusCode, headers);
  // On it nothing was (see `ServerEnv`): these are all of the answer's headers.
  return new Response(text, { status, headers: extra ? { ...headers, ...cors } : jsonHeadersWith(cors) });
}

/** The `{"code","message"}` answer of any thrown value (unknown errors are 500 `internal`). */
export function errorJson(c: Context<ServerEnv>, err: unknown, extra?: Record<string, string>): Response {
  const { status, body } = errorToWire(err);
  note(c, { code: body.code });
  return json(c, status, body, extra);
}
