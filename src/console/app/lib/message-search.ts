import type { Msg } from "../components/message.js";
import { decodeBody } from "./format.js";

/** Where a search looks. */
export type SearchField = "any" | "body" | "subject" | "property";

/**
 * Whether a message matches: case-insensitive substring of its body text (when it is UTF-8), its
 * subject, or its properties (`key`, `value` or `key=value`); `any` looks at all three and the
 * message and correlation ids.
 */
export function messageMatches(m: Msg, needle: string, field: SearchField): boolean {
  const n = needle.trim().toLowerCase();
  if (n === "") return true;
  const has = (v: string | null | undefined) => !!v && v.toLowerCase().includes(n);
  const inBody = () => has(decodeBody(m.body).text);
  const inSubject = () => has(m.subject);
  const inProperties = () => Object.entries(m.properties ?? {}).some(([k, v]) => has(`${k}=${v ?? ""}`));
  switch (field) {
    case "body":
      return inBody();
    case "subject":
      return inSubject();
    case "property":
      return inProperties();
    default:
      return inSubject() || inProperties() || has(m.message_id) || has(m.correlation_id) || inBody();
  }
}
