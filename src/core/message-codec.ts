import type { Message } from "../contract/types.js";

/** Stores claimed messages as JSON (bodies base64) so a retried receive replays them verbatim. */
export function encodeMessages(messages: Message[]): string {
  return JSON.stringify(messages.map((m) => ({ ...m, body: m.body.toString("base64") })));
}

export function decodeMessages(json: string): Message[] {
  return (JSON.parse(json) as (Omit<Message, "body"> & { body: string })[]).map((m) => ({
    ...m,
    body: Buffer.from(m.body, "base64"),
  }));
}
