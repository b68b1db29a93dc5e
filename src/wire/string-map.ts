import { z } from "zod";

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

type StringMap<Nullable extends boolean> = Record<string, Nullable extends true ? string | null : string>;

/**
 * An open map of strings (message properties, worker details), validated like `z.record` and
 * documented as one. Not `z.record` itself: that drops a `"__proto__"` key without a word (its
 * guard against prototype pollution), and to a broker that is an ordinary property name a sender
 * may use. `JSON.parse` makes such a key an own data property, and this schema hands the parsed
 * object on as it is, so the key round-trips; code that copies a map must keep it data
 * (`Object.fromEntries`, spread), never assign it.
 */
export function stringMap<const Nullable extends boolean = false>(
  options: { nullable?: Nullable } = {},
): z.ZodType<StringMap<Nullable>, StringMap<Nullable>> {
  const nullable = options.nullable === true;
  const valueSchema = nullable ? { type: "string", nullable: true } : { type: "string" };
  return z
    .unknown()
    .superRefine((value, ctx) => {
      if (!isPlainObject(value)) {
        ctx.addIssue({ code: "invalid_type", expected: "record", input: value });
        return;
      }
      for (const [key, item] of Object.entries(value)) {
        if (typeof item === "string" || (nullable && item === null)) continue;
        ctx.addIssue({ code: "invalid_type", expected: "string", input: item, path: [key] });
      }
    })
    .meta({ type: "object", additionalProperties: valueSchema }) as unknown as z.ZodType<
    StringMap<Nullable>,
    StringMap<Nullable>
  >;
}
