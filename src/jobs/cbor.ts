import { decode, encode } from "cbor2";
import { SerializationError } from "./errors.js";
import type { Serializer } from "./serializer.js";

/** Codec tags: the first byte of every payload of the cross-SDK envelope. */
export const CODEC_NATIVE = 0x00;
export const CODEC_MSGPACK = 0x01;
export const CODEC_CBOR = 0x02;

/**
 * The writer rules of the cross-SDK wire format: definite lengths, shortest-form integers (an
 * integral number beyond 2^53 too), every finite float as a 64-bit float. Readers accept any form.
 */
const ENCODE = { float64: true, reduceUnsafeNumbers: true } as const;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== "object") return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * The cross-SDK serializer: a one-byte codec tag (`0x02`) then RFC 8949 CBOR. A call is the array
 * `[args, kwargs]` (kwargs a map, empty from TypeScript; a non-empty one is passed to the handler
 * as a trailing object argument); a result is the bare value. Integers beyond 2^53 decode as
 * BigInt, Dates travel as tag 1. Use it on every side of a topic shared across languages.
 */
export class CborSerializer implements Serializer {
  readonly contentType = "application/cbor";

  serialize(value: unknown): Uint8Array {
    return this.envelope(value);
  }

  deserialize(bytes: Uint8Array): unknown {
    return this.open(bytes);
  }

  serializeCall(args: unknown[]): Uint8Array {
    return this.envelope([args, {}]);
  }

  deserializeCall(bytes: Uint8Array): unknown[] {
    const call = this.open(bytes);
    if (!Array.isArray(call) || call.length !== 2 || !Array.isArray(call[0])) {
      throw new SerializationError("a CBOR call body is the array [args, kwargs]");
    }
    const [args, kwargs] = call as [unknown[], unknown];
    const named = kwargs instanceof Map ? Object.fromEntries(kwargs) : kwargs;
    if (isPlainObject(named) && Object.keys(named).length > 0) return [...args, named];
    return args;
  }

  private envelope(value: unknown): Uint8Array {
    let body: Uint8Array;
    try {
      body = encode(value, ENCODE);
    } catch (err) {
      throw new SerializationError(`cannot serialize to CBOR: ${(err as Error).message}`, { cause: err });
    }
    const out = new Uint8Array(body.length + 1);
    out[0] = CODEC_CBOR;
    out.set(body, 1);
    return out;
  }

  private open(bytes: Uint8Array): unknown {
    if (bytes.length === 0) throw new SerializationError("empty payload: no codec tag");
    const tag = bytes[0]!;
    if (tag !== CODEC_CBOR) {
      const what =
        tag === CODEC_NATIVE
          ? "0x00 (native, not cross-SDK)"
          : tag === CODEC_MSGPACK
            ? "0x01 (msgpack)"
            : `0x${tag.toString(16).padStart(2, "0")}`;
      throw new SerializationError(
        `unsupported payload codec tag ${what}; this serializer reads 0x02 (CBOR)`,
      );
    }
    try {
      return decode(bytes.subarray(1));
    } catch (err) {
      throw new SerializationError(`cannot parse CBOR: ${(err as Error).message}`, { cause: err });
    }
  }
}
