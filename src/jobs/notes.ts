import { NotesValidationError } from "./errors.js";

export const MAX_NOTES_FIELDS = 15;
export const MAX_NOTES_BYTES = 4096;

/** JSON with object keys sorted at every depth: equal notes always encode to equal text. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort())
      out[key] = canonical((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

/**
 * Validates a job's notes (a plain object, at most 15 top-level fields, at most 4 KiB encoded) and
 * returns their canonical JSON.
 */
export function encodeNotes(notes: unknown): string {
  if (notes === null || typeof notes !== "object" || Array.isArray(notes)) {
    throw new NotesValidationError("notes must be a plain object");
  }
  const fields = Object.keys(notes).length;
  if (fields > MAX_NOTES_FIELDS) {
    throw new NotesValidationError(`notes have ${fields} fields; at most ${MAX_NOTES_FIELDS} are allowed`);
  }
  let text: string;
  try {
    text = JSON.stringify(canonical(notes));
  } catch (err) {
    throw new NotesValidationError(`notes are not JSON: ${(err as Error).message}`);
  }
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_NOTES_BYTES) {
    throw new NotesValidationError(`notes encode to ${bytes} bytes; at most ${MAX_NOTES_BYTES} are allowed`);
  }
  return text;
}
