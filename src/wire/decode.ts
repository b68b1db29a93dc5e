import type { z } from "zod";
import { InvalidArgumentError } from "../contract/errors.js";
import { MAX_MESSAGE_PROPERTIES } from "../contract/limits.js";
import { foldKeys } from "./fold-keys.js";
import { decodeJsonObject } from "./json.js";

function fieldPath(path: PropertyKey[]): string {
  return path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("") || "(root)";
}

/** A validation issue in the words of Go's decoder, so clients see familiar messages. */
function describe(issue: z.core.$ZodIssue): string {
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
 * No object of a request has more keys than a message may have properties (the only open-ended
 * maps are properties and worker details): checked before validation, which would spend seconds
 * on a map of a million entries only for the engine to refuse it.
 */
function refuseHugeObjects(root: unknown): void {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== "object") continue;
    if (Array.isArray(v)) {
      for (const item of v) if (item !== null && typeof item === "object") stack.push(item);
      continue;
    }
    let keys = 0;
    for (const key in v) {
      if (++keys > MAX_MESSAGE_PROPERTIES) {
        throw new InvalidArgumentError(
          `json: an object of more than ${MAX_MESSAGE_PROPERTIES} keys (a message has at most ${MAX_MESSAGE_PROPERTIES} properties)`,
        );
      }
      const item = (v as Record<string, unknown>)[key];
      if (item !== null && typeof item === "object") stack.push(item);
    }
  }
}

/**
 * Decodes and validates a request body against its schema: strict JSON (see `decodeJsonObject`),
 * keys matched to field names case-insensitively (see `foldKeys`), unknown fields refused at every
 * level, types checked. Failures are `InvalidArgumentError`.
 */
export function decodeRequest<S extends z.ZodType>(schema: S, text: string): z.output<S> {
  const parsed = decodeJsonObject(text);
  refuseHugeObjects(parsed);
  const result = schema.safeParse(foldKeys(parsed, schema));
  if (!result.success) throw new InvalidArgumentError(describe(result.error.issues[0]!));
  return result.data;
}
