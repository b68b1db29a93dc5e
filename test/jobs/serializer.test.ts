import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  deserializeCall,
  JsonSerializer,
  type Serializer,
  serializeCall,
  serializeCalls,
} from "../../src/jobs/serializer.js";

// The JSON serializer writes a call's arguments itself when they are simple; the bytes must be
// exactly what JSON.stringify gives, whatever the strings hold.
describe("JsonSerializer: calls", () => {
  const json = new JsonSerializer();
  const text = (args: unknown[]) => Buffer.from(serializeCall(json, args)).toString("utf8");

  it("writes the same bytes as JSON.stringify for every kind of simple argument", () => {
    const calls: unknown[][] = [
      [],
      ["plain"],
      ["", "two", "three"],
      ['quote " inside', "back\\slash", "new\nline", "tab\t", "\u0000nul", "\u001f", "\u007f del"],
      ["emoji 😀 pair", "lone \ud800 high", "lone \udfff low", "\udc00\ud800 reversed"],
      ["line sep \u2028 and \u2029", "é accents ü", "中文"],
      ['"at the start', 'at the end"', "\\", "lines\nand\nmore", "x".repeat(300) + "\n"],
      [0, -0, 1.5, -2e-7, 1e21, Number.NaN, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER],
      [true, false, null],
      ["mixed", 1, null, true],
      // printable ASCII (written with a plain copy), then Latin-1 range characters that must not be
      [Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join("")],
      ["ascii first", "then \u00ff and \u0080", "ascii after"],
      ["\u00e9"],
      ["ascii", 7, "\u007f"],
    ];
    for (const args of calls) {
      assert.equal(text(args), JSON.stringify(args), JSON.stringify(args));
      assert.ok(Buffer.from(serializeCall(json, args)).equals(Buffer.from(JSON.stringify(args), "utf8")));
      assert.deepEqual(deserializeCall(json, serializeCall(json, args)), JSON.parse(JSON.stringify(args)));
    }
  });

  it("hands anything else to JSON.stringify (objects, nested lists, undefined, holes, toJSON)", () => {
    const date = new Date(0);
    const calls: unknown[][] = [
      [{ a: 1, b: ["x"] }],
      [["nested", 1]],
      ["x", undefined],
      // biome-ignore lint/suspicious/noSparseArray: a hole is what is tested
      [1, , 2],
      [date],
      ["x", () => 1],
    ];
    for (const args of calls) assert.equal(text(args), JSON.stringify(args));
  });

  it("a subclass that serializes its own way also serializes calls its own way", () => {
    class Upper extends JsonSerializer {
      override serialize(value: unknown): Uint8Array {
        return Buffer.from(JSON.stringify(value).toUpperCase());
      }
    }
    assert.equal(Buffer.from(serializeCall(new Upper(), ["abc"])).toString(), '["ABC"]');
  });
});

// A batch's plain ASCII calls share slabs of bytes; each body must be its own call's bytes exactly.
describe("JsonSerializer: a batch of calls", () => {
  const json = new JsonSerializer();
  const bytes = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

  it("writes each call's bytes as serializeCall does, in order, across slab boundaries", () => {
    const calls: unknown[][] = [];
    for (let i = 0; i < 700; i++) {
      // Plain ASCII of many lengths (slabs cut at 64 KiB), with the other kinds between.
      calls.push(["job", i, "y".repeat((i * 37) % 500)]);
      if (i % 50 === 0) calls.push(["é non-ASCII", i]);
      if (i % 70 === 0) calls.push([{ nested: i }]);
      if (i % 90 === 0) calls.push(["z".repeat(20_000)]); // longer than a quarter slab: its own bytes
      if (i % 33 === 0) calls.push([]);
      if (i % 40 === 0) calls.push([Number.NaN, -0, 1e21, -2e-7, true, null, "x", Number.NEGATIVE_INFINITY]);
    }
    const bodies = serializeCalls(json, calls);
    assert.equal(bodies.length, calls.length);
    calls.forEach((args, i) => {
      assert.ok(bytes(bodies[i]!).equals(Buffer.from(serializeCall(json, args))), `call ${i}`);
      assert.equal(bytes(bodies[i]!).toString("utf8"), JSON.stringify(args), `call ${i}`);
      assert.deepEqual(deserializeCall(json, bodies[i]!), JSON.parse(JSON.stringify(args)));
    });
    const slabs = new Set(bodies.map((b) => b.buffer));
    assert.ok(slabs.size < calls.length / 10, `${slabs.size} buffers for ${calls.length} calls`);
  });

  it("asks a serializer of its own way call by call", () => {
    class Upper extends JsonSerializer {
      override serialize(value: unknown): Uint8Array {
        return Buffer.from(JSON.stringify(value).toUpperCase());
      }
    }
    class Tagged extends JsonSerializer {
      override serializeCall(args: unknown[]): Uint8Array {
        return Buffer.from(`call:${args.length}`);
      }
    }
    const custom: Serializer = {
      serialize: (v) => Buffer.from(`v:${JSON.stringify(v)}`),
      deserialize: () => undefined,
    };
    const text = (s: Serializer) => serializeCalls(s, [["abc"], [1, 2]]).map((b) => bytes(b).toString());
    assert.deepEqual(text(new Upper()), ['["ABC"]', "[1,2]"]);
    assert.deepEqual(text(new Tagged()), ["call:1", "call:2"]);
    assert.deepEqual(text(custom), ['v:["abc"]', "v:[1,2]"]);
  });
});
