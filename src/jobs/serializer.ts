import { SerializationError } from "./errors.js";

/**
 * Turns task arguments and results into bytes and back. A job's body is `serialize(args)` (the
 * argument list), its kept result is `serialize(result)`.
 */
export interface Serializer {
  /** A MIME type stored as the message's content type (informative). */
  readonly contentType?: string;
  serialize(value: unknown): Uint8Array;
  deserialize(bytes: Uint8Array): unknown;
}

const EMPTY = new Uint8Array(0);

/** The default: JSON (so same-language only: no Dates, BigInts or Buffers round-trip). `undefined` is empty bytes. */
export class JsonSerializer implements Serializer {
  readonly contentType = "application/json";

  serialize(value: unknown): Uint8Array {
    if (value === undefined) return EMPTY;
    try {
      return Buffer.from(JSON.stringify(value), "utf8");
    } catch (err) {
      throw new SerializationError(`cannot serialize to JSON: ${(err as Error).message}`, { cause: err });
    }
  }

  deserialize(bytes: Uint8Array): unknown {
    if (bytes.length === 0) return undefined;
    try {
      return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"));
    } catch (err) {
      throw new SerializationError(`cannot parse JSON: ${(err as Error).message}`, { cause: err });
    }
  }
}
