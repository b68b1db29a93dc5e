// A message's body is decoded at most once for all the filters it goes through, only when one
// reads it, and body_json converts only what a filter can see.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { compileMessageFilter, type FilterMessage } from "../../src/filter/index.js";

/** A message whose body counts how often it is read. */
function countingMessage(json: unknown): { msg: FilterMessage; reads: () => number } {
  const bytes = new TextEncoder().encode(JSON.stringify(json));
  let reads = 0;
  const msg = {
    subject: "orders.eu",
    contentType: "application/json",
    enqueuedAt: 0,
    visibleAt: 0,
    get body() {
      reads++;
      return bytes;
    },
  } as FilterMessage;
  return { msg, reads: () => reads };
}

describe("body decoding", () => {
  test("filters given the same input share one decode", () => {
    const { msg, reads } = countingMessage({ amount: 120, tier: "gold" });
    const filters = [
      compileMessageFilter("body_json.amount > 100"),
      compileMessageFilter('body_json.tier == "gold"'),
      compileMessageFilter('body_text contains "gold"'),
      compileMessageFilter("len(body_json) == 2"),
    ];
    for (const f of filters) assert.equal(f.matches(msg), true);
    assert.equal(reads(), 1);
  });

  test("filters that do not read the body never decode it", () => {
    const { msg, reads } = countingMessage({ amount: 120 });
    assert.equal(compileMessageFilter('subject startsWith "orders."').matches(msg), true);
    assert.equal(compileMessageFilter("body_size > 0").matches(msg), true);
    assert.equal(reads(), 1); // body_size reads the length only
  });

  test("a value read by key is the same as with a whole decode", () => {
    const { msg } = countingMessage({ n: 3, nested: { k: [1, 2.5] }, other: 7 });
    // Numbers are floats either way: `%` needs ints, so it fails (no match), and type() says float.
    assert.equal(compileMessageFilter("body_json.n % 2 == 1").matches(msg), false);
    assert.equal(compileMessageFilter('type(body_json.n) == "float"').matches(msg), true);
    assert.equal(compileMessageFilter('type(body_json.nested.k[0]) == "float"').matches(msg), true);
    // A filter that takes body_json whole after one that read a key sees every value converted once.
    assert.equal(
      compileMessageFilter('all(values(body_json), type(#) in ["float", "map"])').matches(msg),
      true,
    );
    assert.equal(compileMessageFilter('type(body_json.other) == "float"').matches(msg), true);
  });

  test("a number too large for a float makes the body empty, as a full decode does", () => {
    const bytes = new TextEncoder().encode('{"a": 1, "b": 1e400}');
    const msg: FilterMessage = { contentType: "application/json", body: bytes, enqueuedAt: 0, visibleAt: 0 };
    assert.equal(compileMessageFilter("len(body_json) == 0").matches(msg), true);
    assert.equal(compileMessageFilter('"a" in body_json').matches({ ...msg }), false);
  });

  test("a frozen input still works, each filter decoding for itself", () => {
    const { msg } = countingMessage({ amount: 120 });
    const frozen = Object.freeze({ ...msg, body: msg.body });
    assert.equal(compileMessageFilter("body_json.amount > 100").matches(frozen), true);
  });
});
