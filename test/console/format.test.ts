import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseJobError } from "../../src/console/app/components/job-error.js";
import type { Msg } from "../../src/console/app/components/message.js";
import { duration, utf8ToBase64 } from "../../src/console/app/lib/format.js";
import { looksLikeJob } from "../../src/console/app/lib/job-queues.js";
import { messageMatches } from "../../src/console/app/lib/message-search.js";
import { errorText } from "../../src/jobs/job-runner.js";

// The console's pure helpers, without a browser (the Chromium tests show them on the pages).

const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;
const D = 24 * H;
const nb = (text: string) => text.replaceAll(" ", "\u00a0").replaceAll("\u00a0|\u00a0", " ");

describe("console helpers", () => {
  it("rounds a duration as a whole: never 60 s, 60 min or 24 h; days in words", () => {
    const cases: [number, string][] = [
      [0, "0 ms"],
      [999.6, "1 s"],
      [1500, "1.5 s"],
      [9_960, "10 s"],
      [59_600, "1 min"],
      [61 * S, "1 min | 1 s"],
      [59 * MIN + 59.6 * S, "1 h"],
      [2 * H + 5 * MIN, "2 h | 5 min"],
      [23 * H + 59.6 * MIN, "1 day"],
      [D + 2 * H, "1 day | 2 h"],
      [6 * D + 23 * H + 40 * MIN, "7 days"],
      [6 * D + 23 * H + 20 * MIN, "6 days | 23 h"],
      [-90 * S, "-1 min | 30 s"],
    ];
    for (const [ms, expected] of cases) assert.equal(duration(ms), nb(expected), `${ms} ms`);
    assert.equal(duration(undefined), "—");
  });

  it("reads the job face's stored error as type, message and stack", () => {
    const err = new TypeError("card declined\nfor 99");
    const parsed = parseJobError(errorText(err));
    assert.equal(parsed.type, "TypeError");
    assert.equal(parsed.message, "card declined\nfor 99");
    assert.ok(parsed.stack?.includes("\n    at "), "the stack keeps its line breaks");
    assert.deepEqual(parseJobError("plain failure"), { message: "plain failure" });
    assert.deepEqual(parseJobError('{"other": 1}'), { message: '{"other": 1}' });
  });

  it("matches a message by body, subject, property or anywhere, case-insensitively", () => {
    const m: Msg = {
      seq_number: 1,
      body: utf8ToBase64('{"sku": "Needle-42"}'),
      subject: "catalog.special",
      properties: { color: "teal" },
      message_id: "m-7",
    };
    assert.ok(messageMatches(m, "needle", "body"));
    assert.ok(!messageMatches(m, "needle", "subject"));
    assert.ok(messageMatches(m, "SPECIAL", "subject"));
    assert.ok(messageMatches(m, "color=teal", "property"));
    assert.ok(messageMatches(m, "teal", "property"));
    assert.ok(!messageMatches(m, "color=red", "property"));
    assert.ok(messageMatches(m, "m-7", "any"));
    assert.ok(!messageMatches(m, "m-7", "body"));
    // A binary body is not searched as text.
    assert.ok(!messageMatches({ ...m, body: "//79" }, "needle", "body"));
  });

  it("knows a job by its task name with its own lease and attempt budget", () => {
    assert.ok(looksLikeJob({ subject: "resize", lock_duration_ms: 301_000, max_delivery_count: 4 }));
    assert.ok(!looksLikeJob({ subject: "order.created" }));
    assert.ok(!looksLikeJob({ lock_duration_ms: 301_000, max_delivery_count: 4 }));
  });
});
