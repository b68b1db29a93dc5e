import { InvalidArgumentError } from "../contract/errors.js";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** How a body travels in a tool's arguments or result. */
export type BodyEncoding = "utf8" | "base64";

/**
 * A body as an agent reads it: the text itself when it is UTF-8, else base64 with
 * `body_encoding: "base64"` saying so. An empty body is omitted (as on the wire).
 */
export function bodyForAgent(body: Uint8Array): { body?: string; body_encoding?: "base64" } {
  if (body.length === 0) return {};
  try {
    return { body: utf8.decode(body) };
  } catch {
    return { body: Buffer.from(body).toString("base64"), body_encoding: "base64" };
  }
}

/** A body from a tool's arguments: UTF-8 text, or base64 when `encoding` says so. */
export function bodyFromAgent(body: string, encoding: BodyEncoding = "utf8"): Buffer {
  if (encoding === "utf8") return Buffer.from(body, "utf8");
  const clean = body.replace(/[\r\n]/g, "");
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(clean))
    throw new InvalidArgumentError("mqlite: body is not standard base64 (body_encoding is base64)");
  return Buffer.from(clean, "base64");
}
