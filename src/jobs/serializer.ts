import { SerializationError } from "./errors.js";

/**
 * Turns task arguments and results into bytes and back. A job's body is the serialized call (the
 * argument list: `serializeCall` when the serializer has one, else `serialize(args)`), its kept
 * result is `serialize(result)`.
 */
export interface Serializer {
  /** A MIME type stored as the message's content type (informative). */
  readonly contentType?: string;
  serialize(value: unknown): Uint8Array;
  deserialize(bytes: Uint8Array): unknown;
  /** The body of a call (positional arguments). Default: `serialize(args)`. */
  serializeCall?(args: unknown[]): Uint8Array;
  /** The positional arguments of a call body. Default: `deserialize(bytes)` as a list. */
  deserializeCall?(bytes: Uint8Array): unknown[];
}

/** A call's body with `serializer` (its `serializeCall`, or `serialize(args)`). */
export function serializeCall(serializer: Serializer, args: unknown[]): Uint8Array {
  return serializer.serializeCall ? serializer.serializeCall(args) : serializer.serialize(args);
}

/** A call body's positional arguments (a non-list value is one argument; empty bytes none). */
export function deserializeCall(serializer: Serializer, bytes: Uint8Array): unknown[] {
  if (serializer.deserializeCall) return serializer.deserializeCall(bytes);
  const args = serializer.deserialize(bytes);
  return Array.isArray(args) ? args : args === undefined ? [] : [args];
}

const EMPTY = new Uint8Array(0);

/**
 * A string `JSON.stringify` would copy as it is: none of what it escapes, and no surrogates (it
 * decides about pairs itself). Anchored and negated, V8 matches it about twice as fast as it finds
 * the first such character with the plain class.
 */
const VERBATIM = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

/**
 * A string of printable ASCII with nothing to escape: copied as it is, and its JSON is the same
 * bytes in Latin-1 as in UTF-8, so the call is written with a plain copy instead of UTF-8 encoding.
 */
const ASCII_VERBATIM = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

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

  /**
   * `serialize(args)`, byte for byte, with a shortcut for the common call: an argument list of
   * strings, numbers, booleans and nulls is written here, a string with nothing to escape copied as
   * it is (`JSON.stringify` examines it character by character, the slowest part of an enqueue).
   */
  serializeCall(args: unknown[]): Uint8Array {
    // A subclass that writes values its own way writes calls its own way too.
    if (this.serialize !== JsonSerializer.prototype.serialize) return this.serialize(args);
    let json = "[";
    let ascii = true;
    for (let i = 0; i < args.length; i++) {
      const v = args[i];
      let piece: string;
      if (typeof v === "string") {
        if (ASCII_VERBATIM.test(v)) piece = `"${v}"`;
        else {
          ascii = false;
          piece = VERBATIM.test(v) ? `"${v}"` : JSON.stringify(v);
        }
      } else if (typeof v === "number" || typeof v === "boolean" || v === null) piece = JSON.stringify(v);
      else return this.serialize(args);
      json += i === 0 ? piece : `,${piece}`;
    }
    return Buffer.from(`${json}]`, ascii ? "latin1" : "utf8");
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
