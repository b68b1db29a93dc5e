// A large body decoded in slices gives what decoding it in one go gives: the same request, or the
// same error naming the same field.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  CompleteBatchRequest,
  decodeBase64,
  decodeRequest,
  decodeRequestSliced,
  outgoingFromWire,
  prepareList,
  ReceiveAnyRequest,
  RenewBatchRequest,
  SendRequest,
} from "../../src/wire/index.js";

async function outcome(run: () => unknown): Promise<{ ok: unknown } | { error: string }> {
  try {
    return { ok: await run() };
  } catch (err) {
    return { error: `${(err as { code?: string }).code}: ${(err as Error).message}` };
  }
}

const body = Buffer.alloc(3000, 1).toString("base64");
const messages = (n: number, extra: object = {}) =>
  Array.from({ length: n }, (_, i) => ({ body, message_id: `m${i}`, properties: { k: `v${i}` }, ...extra }));

describe("sliced decoding", () => {
  const cases: [string, { schema: any; text: string }][] = [
    [
      "a large Send",
      { schema: SendRequest, text: JSON.stringify({ queue: "q", messages: messages(500), ttl_ms: 5 }) },
    ],
    [
      "keys in another case, at the top and in the items (as Go's clients may send them)",
      {
        schema: SendRequest,
        text: JSON.stringify({
          Queue: "q",
          MESSAGES: messages(400).map(({ body: b, message_id, properties }) => ({
            Body: b,
            Message_ID: message_id,
            properties,
          })),
        }),
      },
    ],
    [
      "a list item of a wrong type",
      {
        schema: SendRequest,
        text: JSON.stringify({ queue: "q", messages: [...messages(300), { body: 5 }] }),
      },
    ],
    [
      "an unknown field in an item",
      {
        schema: SendRequest,
        text: JSON.stringify({ queue: "q", messages: [...messages(300), { bogus: 1 }] }),
      },
    ],
    [
      "an unknown top-level field",
      { schema: SendRequest, text: JSON.stringify({ queue: "q", messages: messages(300), bogus: 1 }) },
    ],
    [
      "a fraction in an item",
      {
        schema: CompleteBatchRequest,
        text: `{"queue":"q","messages":[${`{"seq_number":1,"lock_token":"${body}"},`.repeat(200)}{"seq_number":1.5}]}`,
      },
    ],
    [
      "a lone surrogate in an item",
      {
        schema: SendRequest,
        text: `{"queue":"q","messages":[${JSON.stringify(messages(300)).slice(1, -1)},{"subject":"\\ud800"}]}`,
      },
    ],
    [
      "over a list's own cap",
      {
        schema: RenewBatchRequest,
        text: JSON.stringify({
          queue: "q",
          messages: Array.from({ length: 600 }, () => ({ seq_number: 1, lock_token: body.slice(0, 600) })),
        }),
      },
    ],
    [
      "a list of names",
      {
        schema: ReceiveAnyRequest,
        text: JSON.stringify({
          queues: Array.from({ length: 900 }, (_, i) => `q${i}`.padEnd(400, "x")),
          wait_time_ms: 0,
        }),
      },
    ],
    [
      "malformed JSON in an item",
      {
        schema: SendRequest,
        text: `{"queue":"q","messages":[${JSON.stringify(messages(300)).slice(1, -1)},{"body":}]}`,
      },
    ],
    [
      // Found by the RPC fuzzer: "__proto__" was looked up on the schema's shape and found
      // Object.prototype, a 500 instead of the unknown-field refusal.
      "a __proto__ key holding a list, beside a large field",
      {
        schema: CompleteBatchRequest,
        text: `{"queue":"q","messages":[{"seq_number":1,"lock_token":"${body.repeat(100)}"}],"__proto__":["x"]}`,
      },
    ],
    [
      "a constructor key holding a list",
      {
        schema: SendRequest,
        text: `{"queue":"q","messages":${JSON.stringify(messages(300))},"constructor":[]}`,
      },
    ],
    [
      "multi-byte characters in the items and around the lists",
      {
        schema: SendRequest,
        text: JSON.stringify({
          queue: "qé€😀",
          messages: messages(300, { subject: "ünïcødé €😀", properties: { ключ: "值😀" } }),
        }),
      },
    ],
    [
      "a duplicate list key",
      {
        schema: SendRequest,
        text: `{"queue":"q","messages":${JSON.stringify(messages(300))},"messages":[]}`,
      },
    ],
  ];
  for (const [name, { schema, text }] of cases) {
    it(`${name}: the same outcome as in one go`, async () => {
      assert.ok(text.length > 256 * 1024, "a body that is sliced");
      const whole = await outcome(() => decodeRequest(schema, text));
      const sliced = await outcome(() => decodeRequestSliced(schema, text, decodeRequest));
      // The server hands a large body over as its bytes, never decoded whole.
      const bytes = await outcome(() => decodeRequestSliced(schema, Buffer.from(text), decodeRequest));
      if (name.startsWith("malformed")) {
        // V8's message quotes the text around the error, which differs; the refusal does not.
        const prefix = "invalid_argument: json: Unexpected token '}'";
        assert.ok("error" in whole && whole.error.startsWith(prefix), JSON.stringify(whole));
        assert.ok("error" in sliced && sliced.error.startsWith(prefix), JSON.stringify(sliced));
        assert.ok("error" in bytes && bytes.error.startsWith(prefix), JSON.stringify(bytes));
      } else {
        assert.deepEqual(sliced, whole);
        assert.deepEqual(bytes, whole);
      }
    });
  }

  it("decodes malformed UTF-8 in bytes as decoding the whole text does (U+FFFD)", async () => {
    const text = JSON.stringify({ queue: "q", messages: messages(300, { subject: "aXbXc" }) });
    // Each X becomes a lone continuation byte, or a lead byte cut short by the next ASCII one.
    const bytes = Buffer.from(text);
    for (let i = bytes.indexOf("X"), n = 0; i !== -1; i = bytes.indexOf("X", i + 1), n++)
      bytes[i] = n % 2 === 0 ? 0x80 : 0xe2;
    const whole = decodeRequest(SendRequest, bytes.toString());
    assert.equal(whole.messages?.[0]?.subject, "a\ufffdb\ufffdc");
    assert.deepEqual(await decodeRequestSliced(SendRequest, bytes, decodeRequest), whole);
  });

  it("prepares a list's items as it decodes them, as prepareList does to a request decoded whole", async () => {
    const text = JSON.stringify({ queue: "q", messages: messages(300) });
    const prepare = { field: "messages", item: outgoingFromWire };
    const sliced = await decodeRequestSliced(SendRequest, Buffer.from(text), decodeRequest, prepare);
    const whole = prepareList(decodeRequest(SendRequest, text), prepare);
    assert.deepEqual(sliced, whole);
    const first = sliced.messages?.[0] as unknown as { body: Buffer; messageId: string };
    assert.ok(Buffer.isBuffer(first.body), "the body decoded from base64");
    assert.deepEqual(first.body, Buffer.alloc(3000, 1));
    assert.equal(first.messageId, "m0");
    // A request with no such list is left as it is.
    const other = await decodeRequestSliced(
      ReceiveAnyRequest,
      JSON.stringify({ queues: Array.from({ length: 900 }, (_, i) => `q${i}`.padEnd(400, "x")) }),
      decodeRequest,
      prepare,
    );
    assert.equal(other.queues?.[899]?.startsWith("q899"), true);
  });

  it("writes a Send's bodies into the request's own bytes, each a view of them, as decoded in one go", async () => {
    const split = `${body.slice(0, 76)}\r\n${body.slice(76)}`; // CR LF inside, as Go's clients may wrap
    const list = [...messages(300), { body: "" }, { body: split }, { body: "AAE=" }, { body: "AA==" }];
    const text = JSON.stringify({ queue: "q", messages: list });
    const bytes = Buffer.from(text);
    const prepare = { field: "messages", item: outgoingFromWire };
    const sliced = await decodeRequestSliced(SendRequest, bytes, decodeRequest, prepare);
    const whole = prepareList(decodeRequest(SendRequest, text), prepare);
    assert.deepEqual(sliced, whole);
    const bodies = (sliced.messages as unknown as { body: Buffer }[]).map((m) => m.body);
    assert.equal(bodies.length, 304);
    for (const [i, b] of bodies.entries()) {
      if (b.length === 0) continue;
      assert.equal(b.buffer, bytes.buffer, `body ${i} is a view of the request's bytes`);
    }
    assert.deepEqual(bodies[301], Buffer.alloc(3000, 1));
    assert.deepEqual([...bodies[302]!], [0, 1]);
    assert.deepEqual([...bodies[303]!], [0]);
    // Decoded whole (a string), each body has bytes of its own, as before.
    assert.notEqual((whole.messages as unknown as { body: Buffer }[])[0]!.body.buffer, bytes.buffer);
  });

  it("decodes base64 into the given place only when it fits there", () => {
    const room = Buffer.alloc(16, 0xff);
    const into = decodeBase64("AAECAw==", { bytes: room, start: 4, end: 12 });
    assert.deepEqual([...into], [0, 1, 2, 3]);
    assert.equal(into.buffer, room.buffer);
    assert.equal(into.byteOffset, room.byteOffset + 4);
    const tight = Buffer.alloc(16, 0xff);
    const own = decodeBase64("AAECAw==", { bytes: tight, start: 4, end: 7 });
    assert.deepEqual([...own], [0, 1, 2, 3]);
    assert.notEqual(own.buffer, tight.buffer, "three bytes of room for four: bytes of its own");
    assert.deepEqual(tight, Buffer.alloc(16, 0xff), "and the room left as it was");
  });

  it("matches keys case-insensitively, as decoding in one go does", async () => {
    const text = JSON.stringify({
      Queue: "q",
      MESSAGES: messages(400).map((m) => ({ Body: m.body, Message_ID: m.message_id })),
    });
    assert.ok(text.length > 256 * 1024, "a body that is sliced");
    const req = await decodeRequestSliced(SendRequest, text, decodeRequest);
    assert.equal(req.queue, "q");
    assert.equal(req.messages?.length, 400);
    assert.equal(req.messages?.[399]?.message_id, "m399");
  });

  it("lets other work run between slices", async () => {
    const text = JSON.stringify({ queue: "q", messages: messages(5000) });
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    try {
      await decodeRequestSliced(SendRequest, text, decodeRequest);
    } finally {
      clearInterval(ticker);
    }
    assert.ok(turns > 0, "a timer ran while it decoded");
  });
});
