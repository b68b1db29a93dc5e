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

/** The bodies of many calls with `serializer`: `serializeCall` of each (see `JsonSerializer.serializeCalls`). */
export function serializeCalls(serializer: Serializer, calls: readonly unknown[][]): Uint8Array[] {
  if (serializer instanceof JsonSerializer) return serializer.serializeCalls(calls);
  return calls.map((args) => serializeCall(serializer, args));
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

/** Characters of plain calls written into one slab of bytes (see `serializeCalls`). */
const SLAB_CHARS = 64 * 1024;

/**
 * The JSON of a call whose arguments are strings, numbers, booleans and nulls, written here (a
 * string with nothing to escape is copied as it is: `JSON.stringify` examines it character by
 * character, the slowest part of an enqueue), and whether it is printable ASCII (its bytes are then
 * its characters, written with a plain copy instead of UTF-8 encoding). Undefined for any other call.
 */
function plainCall(args: unknown[]): { json: string; ascii: boolean } | undefined {
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
    else return undefined;
    json += i === 0 ? piece : `,${piece}`;
  }
  return { json: `${json}]`, ascii };
}

/** Writes plain ASCII call texts into one slab of bytes; `out[slots[k]]` is the view of `texts[k]`. */
function writeSlab(texts: readonly string[], slots: readonly number[], out: Uint8Array[]): void {
  if (texts.length === 0) return;
  const slab = Buffer.from(texts.join(""), "latin1");
  let at = 0;
  for (let k = 0; k < texts.length; k++) {
    const n = texts[k]!.length;
    out[slots[k]!] = slab.subarray(at, at + n);
    at += n;
  }
}

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
    const call = plainCall(args);
    if (call === undefined) return this.serialize(args);
    return Buffer.from(call.json, call.ascii ? "latin1" : "utf8");
  }

  /**
   * `serializeCall` of each call, byte for byte. The plain ASCII calls of a batch are written into
   * shared slabs, each call's body a view of its slab: one copy into bytes per slab instead of one
   * per call (the copies call by call were about a twentieth of a batch enqueue's time).
   */
  serializeCalls(calls: readonly unknown[][]): Uint8Array[] {
    // A subclass that writes values or calls its own way is asked call by call.
    if (
      this.serialize !== JsonSerializer.prototype.serialize ||
      this.serializeCall !== JsonSerializer.prototype.serializeCall
    )
      return calls.map((a) => this.serializeCall(a));
    const out: Uint8Array[] = new Array(calls.length);
    // The pending slab: its calls' texts and their places in `out`.
    let texts: string[] = [];
    let slots: number[] = [];
    let chars = 0;
    for (let i = 0; i < calls.length; i++) {
      const call = plainCall(calls[i]!);
      if (call === undefined) out[i] = this.serialize(calls[i]);
      else if (!call.ascii || call.json.length > SLAB_CHARS / 4)
        out[i] = Buffer.from(call.json, call.ascii ? "latin1" : "utf8");
      else {
        texts.push(call.json);
        slots.push(i);
        chars += call.json.length;
        if (chars >= SLAB_CHARS) {
          writeSlab(texts, slots, out);
          texts = [];
          slots = [];
          chars = 0;
        }
      }
    }
    writeSlab(texts, slots, out);
    return out;
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
