import type { z } from "zod";
import { InvalidArgumentError } from "../contract/errors.js";
import { describe } from "./decode.js";
import { foldKeys } from "./fold-keys.js";
import { decodeJsonObject, decodeJsonValue } from "./json.js";
import {
  type ItemBytes,
  type JsonText,
  REQUEST_SHAPE_CAPS,
  refuseOversizedJson,
  type TopLevelList,
} from "./json-shape.js";

/** Bodies from this size on are decoded in slices (`decodeRequestSliced`). */
export const SLICED_DECODE_BYTES = 256 * 1024;

/** How long one slice of decoding runs before it lets other requests run. */
const SLICE_MS = 4;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A list field whose items are turned into what its handler uses (a Send's messages into the
 * broker's, bodies decoded from base64) as each is decoded: the wire form of 10,000 items then
 * never lives at once, and their strings die young instead of surviving into the old generation.
 */
export interface ListPreparation {
  /** The field, as the schema names it. */
  field: string;
  /** `place`: the item's own bytes, when the request was read as bytes (see `ItemBytes`). */
  item: (decoded: never, place?: ItemBytes) => unknown;
}

/** `req` with `prep`'s field prepared, item by item (a request decoded in one go). */
export function prepareList<T>(req: T, prep: ListPreparation | undefined): T {
  const list = prep && (req as Record<string, unknown>)[prep.field];
  if (!Array.isArray(list)) return req;
  const item = prep!.item as (decoded: unknown) => unknown;
  for (let i = 0; i < list.length; i++) list[i] = item(list[i]);
  return req;
}

/** The text from `start` to `end` (byte offsets in bytes, which only ever fall on ASCII characters). */
function textOf(text: JsonText, start?: number, end?: number): string {
  return typeof text === "string" ? text.slice(start, end) : text.toString("utf8", start, end);
}

interface ListSchema {
  element: z.ZodType;
  max: number;
}

/** The item schema and cap of a request's list field, seen through `.nullish()`; undefined if not a list. */
function listSchemaOf(schema: z.ZodType, key: string): ListSchema | undefined {
  const shape = (schema as unknown as { shape?: Record<string, z.ZodType> }).shape;
  // Own fields only: a body's "__proto__" or "constructor" key names no field of the schema.
  let field = shape && Object.hasOwn(shape, key) ? shape[key] : undefined;
  for (let i = 0; field && i < 4; i++) {
    const def = (field as unknown as { def: { type: string; innerType?: z.ZodType; element?: z.ZodType } })
      .def;
    if (def.type === "array") {
      const checks =
        (def as { checks?: { _zod: { def: { check: string; maximum?: number } } }[] }).checks ?? [];
      let max = Number.POSITIVE_INFINITY;
      for (const c of checks) if (c._zod.def.check === "max_length") max = Math.min(max, c._zod.def.maximum!);
      return { element: def.element!, max };
    }
    if (def.type !== "optional" && def.type !== "nullable") return undefined;
    field = def.innerType;
  }
  return undefined;
}

/**
 * `decodeRequest` for a large body, in slices of a few milliseconds with other requests served in
 * between: decoding 10,000 messages in one go held every other request of the server for a second
 * or more. The scan (caps first, as always) notes where each top-level list lies; the rest of the
 * object is decoded with those lists emptied, and each list item is then parsed and validated on
 * its own (and prepared, see `ListPreparation`). The outcome, answer or error, is the one
 * `decodeRequest` gives, with the error naming the same field. A body whose lists cannot be
 * matched to fields is decoded in one go. `text` may be the body's bytes: no string of the whole
 * body is made then, only one per item.
 */
export async function decodeRequestSliced<S extends z.ZodType>(
  schema: S,
  text: JsonText,
  decodeWhole: (schema: S, text: string) => z.output<S>,
  prepare?: ListPreparation,
): Promise<z.output<S>> {
  const lists: TopLevelList[] = [];
  refuseOversizedJson(text, REQUEST_SHAPE_CAPS, lists);
  if (lists.length === 0) return prepareList(decodeWhole(schema, textOf(text)), prepare);
  let skeletonText = "";
  let from = 0;
  for (const list of lists) {
    skeletonText += `${textOf(text, from, list.open + 1)}]`;
    from = list.close + 1;
  }
  skeletonText += textOf(text, from);
  // Keys are matched to field names case-insensitively, as `decodeRequest` does (see `foldKeys`).
  const skeleton = foldKeys(decodeJsonObject(skeletonText), schema) as Record<string, unknown>;
  // The emptied lists, in text order, must be exactly the fields whose value is an empty list.
  const keys = Object.keys(skeleton).filter(
    (k) => Array.isArray(skeleton[k]) && (skeleton[k] as unknown[]).length === 0,
  );
  const fields = keys.map((k) => listSchemaOf(schema, k));
  if (keys.length !== lists.length || fields.some((f) => f === undefined))
    return prepareList(decodeWhole(schema, textOf(text)), prepare);
  await nextTurn();
  const items: unknown[][] = [];
  const bytes = typeof text === "string" ? undefined : text;
  let slice = performance.now();
  for (const [n, list] of lists.entries()) {
    const key = keys[n]!;
    const { element, max } = fields[n]!;
    const prep =
      prepare?.field === key ? (prepare.item as (decoded: unknown, place?: ItemBytes) => unknown) : undefined;
    const bounds = [list.open, ...list.commas, list.close];
    // Only a list without commas can be empty (a whole list decoded here would be the body again).
    const empty = list.commas.length === 0 && textOf(text, list.open + 1, list.close).trim() === "";
    const count = empty ? 0 : bounds.length - 1;
    if (count > max) throw new InvalidArgumentError(`json: field ${key}: at most ${max} items`);
    const out: unknown[] = [];
    for (let i = 0; i < count; i++) {
      const value = decodeJsonValue(textOf(text, bounds[i]! + 1, bounds[i + 1]!));
      const result = element.safeParse(foldKeys(value, element));
      if (!result.success) {
        const issue = result.error.issues[0]!;
        throw new InvalidArgumentError(describe({ ...issue, path: [key, i, ...issue.path] }));
      }
      out.push(
        prep
          ? prep(result.data, bytes && { bytes, start: bounds[i]! + 1, end: bounds[i + 1]! })
          : result.data,
      );
      if (performance.now() - slice > SLICE_MS) {
        await nextTurn();
        slice = performance.now();
      }
    }
    items.push(out);
  }
  const result = schema.safeParse(skeleton);
  if (!result.success) throw new InvalidArgumentError(describe(result.error.issues[0]!));
  const data = result.data as Record<string, unknown>;
  for (const [n, key] of keys.entries()) data[key] = items[n];
  return data as z.output<S>;
}
