import type { z } from "zod";
import { InvalidArgumentError } from "../contract/errors.js";
import { foldKeys } from "./fold-keys.js";
import { decodeJsonObject } from "./json.js";
import { refuseOversizedJson } from "./json-shape.js";

function fieldPath(path: PropertyKey[]): string {
  return path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("") || "(root)";
}

/** A validation issue in the words of Go's decoder, so clients see familiar messages. */
export function describe(issue: z.core.$ZodIssue): string {
  const at = fieldPath(issue.path);
  if (issue.code === "unrecognized_keys") {
    const where = issue.path.length > 0 ? ` in ${at.slice(1)}` : "";
    return `json: unknown field "${issue.keys[0]}"${where}`;
  }
  if (issue.code === "invalid_type")
    return `json: cannot unmarshal into field ${at.slice(1)}: ${issue.message}`;
  return `json: field ${at.slice(1)}: ${issue.message}`;
}

/**
 * Decodes and validates a request body against its schema: strict JSON (see `decodeJsonObject`),
 * keys matched to field names case-insensitively (see `foldKeys`), unknown fields refused at every
 * level, types checked. Failures are `InvalidArgumentError`. The text's depth, array lengths and
 * object sizes are checked before it is parsed (`refuseOversizedJson`), each list's own cap by its
 * schema.
 */
export function decodeRequest<S extends z.ZodType>(schema: S, text: string): z.output<S> {
  refuseOversizedJson(text);
  const parsed = decodeJsonObject(text);
  const result = schema.safeParse(foldKeys(parsed, schema));
  if (!result.success) throw new InvalidArgumentError(describe(result.error.issues[0]!));
  return result.data;
}
