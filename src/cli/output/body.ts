const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The body as text when it is valid UTF-8, else undefined. */
export function utf8Text(body: Uint8Array): string | undefined {
  try {
    return utf8.decode(body);
  } catch {
    return undefined;
  }
}

// Control characters other than none at all would garble a table row.
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * A body in one table cell: plain UTF-8 text as is; text with line breaks or other control
 * characters as a JSON string (quoted, escaped); anything else as `base64:<…>`. Nothing is lost
 * unless `max` (characters) asks for a preview, which ends in `…`.
 */
export function bodyCell(body: Uint8Array, max?: number): string {
  const text = utf8Text(body);
  let cell: string;
  if (text === undefined) cell = `base64:${Buffer.from(body).toString("base64")}`;
  else if (CONTROL.test(text) || text !== text.trim()) cell = JSON.stringify(text);
  else cell = text;
  return max !== undefined && cell.length > max ? `${cell.slice(0, Math.max(1, max - 1))}…` : cell;
}
