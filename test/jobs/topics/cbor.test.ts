import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CborSerializer, SerializationError } from "../../../src/jobs/index.js";
import { eventually } from "../helpers.js";
import { onEverySubject } from "../subject-queues.js";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const bytes = (h: string) => new Uint8Array(Buffer.from(h, "hex"));

// Spec §4.4: the cross-SDK envelope and its test vectors.
describe("CborSerializer: the cross-SDK wire vectors", () => {
  const s = new CborSerializer();

  it("encodes calls exactly as the vectors say", () => {
    assert.equal(hex(s.serializeCall([])), "028280a0");
    assert.equal(hex(s.serializeCall([1, "a"])), "028282016161a0");
    assert.equal(hex(s.serializeCall([null, true, false])), "028283f6f5f4a0");
    assert.equal(hex(s.serializeCall([-1, -1000])), "028282203903e7a0");
    assert.equal(hex(s.serializeCall([1.5])), "028281fb3ff8000000000000a0", "finite floats are 64-bit");
  });

  it("encodes results as bare values", () => {
    assert.equal(hex(s.serialize(true)), "02f5");
    assert.equal(hex(s.serialize(2 ** 53)), "021b0020000000000000", "shortest-form integer beyond 2^53");
  });

  it("decodes the vectors, kwargs as a trailing object argument", () => {
    assert.deepEqual(s.deserializeCall(bytes("028280a0")), []);
    assert.deepEqual(s.deserializeCall(bytes("028282016161a0")), [1, "a"]);
    assert.deepEqual(s.deserializeCall(bytes("028280a1616bf5")), [{ k: true }]);
    assert.deepEqual(s.deserializeCall(bytes("028282016161a1616bf5")), [1, "a", { k: true }]);
    assert.deepEqual(s.deserializeCall(bytes("028283f6f5f4a0")), [null, true, false]);
    assert.deepEqual(s.deserializeCall(bytes("028282203903e7a0")), [-1, -1000]);
    assert.equal(s.deserialize(bytes("02f5")), true);
    assert.equal(s.deserialize(bytes("021b0020000000000000")), 2n ** 53n, "beyond the safe range: BigInt");
  });

  it("decodes the decode-only vectors: half and single precision, >2^53 as BigInt, byte strings", () => {
    assert.deepEqual(s.deserializeCall(bytes("028281f93e00a0")), [1.5]);
    assert.deepEqual(s.deserializeCall(bytes("028281fa3fc00000a0")), [1.5]);
    assert.equal(s.deserialize(bytes("021b0020000000000001")), 9007199254740993n);
    const [b] = s.deserializeCall(bytes("028281420102a0"));
    assert.deepEqual([...(b as Uint8Array)], [1, 2]);
  });

  it("Dates travel as tag 1; a foreign codec tag is refused by name", () => {
    assert.equal(hex(s.serialize(new Date(1000))), "02c101");
    assert.deepEqual(s.deserialize(s.serialize(new Date(1500))), new Date(1500));
    assert.throws(
      () => s.deserialize(bytes("00f5")),
      (e: unknown) => e instanceof SerializationError && /0x00/.test(e.message),
    );
    assert.throws(() => s.deserialize(bytes("01f5")), /0x01/);
  });
});

onEverySubject("CborSerializer: a queue that uses it", (sub) => {
  it("a queue with the CBOR serializer publishes one CBOR payload to every subscriber and the log", async () => {
    // Without a namespace: the raw broker calls below name the topic as the queue does.
    const t = { queue: sub.queue({ namespace: "", serializer: new CborSerializer() }) };
    const got: unknown[] = [];
    const queue = t.queue.subscriber("orders", "a", (n: bigint) => {
      got.push(n);
      return n;
    });
    await queue.declareSubscriptions();
    await queue.subscribeLog("orders", "log");
    const [job] = await queue.publish("orders", [9007199254740993n]);
    const [rec] = await (await queue.broker()).getMessages([Number(job!.id)]);
    assert.equal(hex(rec!.body), "0282811b0020000000000001a0");
    const [logged] = await (await queue.broker()).readTopic("orders", "log");
    assert.equal(hex(logged!.body), hex(rec!.body), "the same bytes");
    queue.runWorker();
    await eventually(() => got.length === 1, 5000, "handler");
    assert.equal(got[0], 9007199254740993n);
    assert.equal(await queue.result(job!.id), 9007199254740993n);
  });
});
