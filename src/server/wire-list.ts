/**
 * A list of an answer kept in the broker's form and turned into its wire form item by item, as
 * the answer is encoded: a 32 MiB Peek answer then never holds every message in both forms (the
 * bytes read and their base64), and each item is dropped once written. Encoded whole (a small
 * answer) it is the list of its items' wire forms (`toJSON`).
 */
export class WireList<W> {
  constructor(
    /** The items; the answer's encoder empties each slot once it has written the item. */
    readonly items: unknown[],
    readonly toWire: (item: never) => W,
    /**
     * The UTF-8 bytes of an item's JSON (those of `JSON.stringify(toWire(item))`, in pieces) where
     * making them directly costs less than the text (a large message body); undefined otherwise.
     */
    readonly jsonBytes?: (item: never) => readonly Uint8Array[] | undefined,
    /** Whether `jsonBytes` makes an item's bytes, known without making them. */
    readonly inBytes?: (item: never) => boolean,
  ) {}

  get length(): number {
    return this.items.length;
  }

  toJSON(): W[] {
    return this.items.map(this.toWire as (item: unknown) => W);
  }
}

/** `W[]` fields of an answer may be given as a `WireList<W>`. */
export type Answer<R> = {
  [F in keyof R]: R[F] | (NonNullable<R[F]> extends readonly (infer W)[] ? WireList<W> : never);
};
