// A long send is prepared in slices (the event loop turning in between), with the answer and the
// errors of preparing it in one go.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { prepareMessages, prepareMessagesInSlices } from "../../src/core/outgoing.js";
import { mapInSlices } from "../../src/core/slices.js";

const PROPS = Object.fromEntries(Array.from({ length: 24 }, (_, i) => [`key${i}`, `value${i}`]));
const messages = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    body: `b${i}`,
    messageId: `m${i}`,
    properties: PROPS,
    priority: i % 5,
  }));

async function outcome(run: () => unknown): Promise<{ ok: unknown } | { error: string }> {
  try {
    return { ok: await run() };
  } catch (err) {
    return { error: `${(err as { code?: string }).code}: ${(err as Error).message}` };
  }
}

describe("preparing a send in slices", () => {
  it("gives what preparing it in one go gives, while timers run", async () => {
    const list = messages(20_000);
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    let sliced: Awaited<ReturnType<typeof prepareMessagesInSlices>>;
    try {
      sliced = await prepareMessagesInSlices(list, 1024);
    } finally {
      clearInterval(ticker);
    }
    assert.deepEqual(sliced, prepareMessages(list, 1024));
    assert.equal(sliced[19_999]!.messageId, "m19999");
    assert.equal(sliced[3]!.propertiesJson, JSON.stringify(PROPS));
    assert.ok(turns > 0, "a timer ran while 20,000 messages were prepared");
  });

  it("refuses with the same error: an oversized body anywhere before any other fault", async () => {
    const list: { body: string; priority?: unknown; properties?: unknown }[] = messages(3000);
    list[10] = { body: "x", properties: { k: 5 } };
    list[2900] = { body: "y".repeat(2000) };
    const whole = await outcome(() => prepareMessages(list as never, 1024));
    const sliced = await outcome(() => prepareMessagesInSlices(list as never, 1024));
    assert.deepEqual(sliced, whole);
    assert.match((sliced as { error: string }).error, /^message_too_large: /);
    list[2900] = { body: "y", priority: -1 };
    const whole2 = await outcome(() => prepareMessages(list as never, 1024));
    assert.deepEqual(await outcome(() => prepareMessagesInSlices(list as never, 1024)), whole2);
    assert.match((whole2 as { error: string }).error, /property "k" must be a string/);
  });

  it("mapInSlices maps in order with each item's index, and stops at the first throw", async () => {
    const seen: number[] = [];
    assert.deepEqual(
      await mapInSlices([5, 6, 7], (x, i) => {
        seen.push(i);
        return x * 2;
      }),
      [10, 12, 14],
    );
    assert.deepEqual(seen, [0, 1, 2]);
    await assert.rejects(
      mapInSlices([1, 2, 3], (x) => {
        if (x === 2) throw new Error("two");
        return x;
      }),
      /two/,
    );
  });
});
