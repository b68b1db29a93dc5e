import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { deserializeCall, JsonSerializer, serializeCall } from "../../src/jobs/serializer.js";

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
