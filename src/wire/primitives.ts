import { z } from "zod";
import { MAX_BATCH_ITEMS } from "../contract/limits.js";
import { isStdBase64 } from "./base64.js";

// Request fields accept JSON `null` as "absent", as Go's decoder leaves a field at its zero value
// on `null`. Every number on the wire is an integer (Go int64), limited here to the safe range.

/** An optional integer field. */
export const int = () => z.int().nullish();

/** A read's own byte budget (our extension: Receive, ReceiveAny, ReceiveDeferred, Peek, ReadTopic, LeaseTopic). */
export const maxBytes = () =>
  int().meta({
    description:
      "Extension: the answer stops after the message whose body and properties cross this many bytes (one message at least); ≤0 → 32 MiB, clamped to 32 MiB.",
  });

/** An optional string field. */
export const str = () => z.string().nullish();

/** An optional boolean field. */
export const bool = () => z.boolean().nullish();

/** An optional `[]byte` field: standard padded base64 (CR/LF ignored), as Go's `encoding/json`. */
export const bytes = () =>
  z
    .string()
    .refine(isStdBase64, { message: "illegal base64 data" })
    .meta({ format: "byte", description: "Standard base64 with padding." })
    .nullish();

/** An optional list field of at most `max` items (`MAX_BATCH_ITEMS` unless given). */
export const list = <T extends z.ZodType>(item: T, max: number = MAX_BATCH_ITEMS) =>
  z
    .array(item)
    .max(max, { message: `at most ${max} items` })
    .meta({ maxItems: max })
    .nullish();

/** The empty object that mutating admin calls answer. */
export const Empty = z.strictObject({}).meta({ id: "Empty" });

/** The `{"ok":true}` answer of settlements and Cancel. */
export const SettleResponse = z.strictObject({ ok: z.boolean() }).meta({ id: "SettleResponse" });
