// Answers that list messages stop after the message that crosses 32 MiB (bodies, properties and
// results), as Receive and Peek do. ReadTopic, LeaseTopic, Browse and GetMessages had no budget: over
// ~400 MB of messages they built a string past V8's limit and answered 500 "Invalid string length"
// after 13-17 s of blocking (LeaseTopic after leasing every message it could not return).
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { MessageTooLargeError } from "../../src/contract/errors.js";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { serve } from "../server/harness.js";
import { tempDir } from "../support/temp.js";

const MiB = 1024 * 1024;
const N = 40;

describe("reliability: answers that list messages have a 32 MiB budget", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  it("ReadTopic, LeaseTopic, Browse stop after the message that crosses it; GetMessages refuses with message_too_large", async () => {
    const path = tmp.file("budget.db");
    const setup = await openBroker(path, { background: false, logger: silentLogger, synchronous: "off" });
    await setup.subscribeLog("t", "audit");
    await setup.createQueue("q");
    const body = Buffer.alloc(MiB, 7);
    const seqs: number[] = [];
    for (let i = 0; i < N; i++) {
      await setup.publish("t", { body });
      seqs.push(...(await setup.send("q", { body })));
    }
    await setup.close();

    const s = await serve({}, { path });
    try {
      const b = s.broker;
      const read = await b.readTopic("t", "audit", { limit: 1000 });
      assert.equal(read.length, 32, "32 MiB, the 32nd crossing it");
      const leased = await b.leaseTopic("t", "audit", { limit: 1000 });
      assert.equal(leased.length, 32);
      const rest = await b.leaseTopic("t", "audit", { limit: 1000 });
      assert.equal(rest.length, N - 32, "the others were not leased");
      assert.equal((await b.browse({ queues: ["q"], limit: 1000 })).length, 32);
      assert.equal((await b.getMessages(seqs.slice(0, 10))).length, 10);
      await assert.rejects(b.getMessages(seqs), MessageTooLargeError);
      // Over HTTP: answers, not 500s.
      const http = await s.rpc("TopicService/ReadTopic", { topic: "t", name: "audit", limit: 1000 });
      assert.equal(http.status, 200);
      assert.equal(http.json.messages.length, 32);
      const many = await s.rpc("JobService/GetMessages", { seq_numbers: seqs });
      assert.equal(many.status, 413, many.text);
      assert.equal(many.json.code, "message_too_large");
    } finally {
      await s.close();
    }
  });
});
