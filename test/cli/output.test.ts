import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { deliveryTime } from "../../src/cli/commands/schedule.js";
import { properties, seqList } from "../../src/cli/options.js";
import { bodyCell } from "../../src/cli/output/body.js";
import { humanDuration } from "../../src/cli/output/format.js";
import { Progress } from "../../src/cli/output/progress.js";
import { table } from "../../src/cli/output/table.js";

describe("CLI output and input helpers", () => {
  it("tables align their columns (numbers to the right) and leave no trailing blanks", () => {
    assert.equal(
      table(
        ["SEQ", "NAME", "BODY"],
        [
          ["1", "a", "x"],
          ["100", "longer", ""],
        ],
        new Set([0]),
      ),
      "SEQ  NAME    BODY\n  1  a       x\n100  longer",
    );
  });

  it("bodies show as text, as a quoted string when they hold control characters, else as base64", () => {
    assert.equal(bodyCell(Buffer.from("héllo")), "héllo");
    assert.equal(bodyCell(Buffer.from("a\nb\t")), '"a\\nb\\t"');
    assert.equal(bodyCell(Buffer.from(" padded")), '" padded"');
    assert.equal(bodyCell(Buffer.from([0xff, 0xfe])), "base64://4=");
    assert.equal(bodyCell(Buffer.from("abcdefghij"), 5), "abcd…");
  });

  it("durations read as people write them", () => {
    assert.deepEqual([0, 250, 1500, 30_000, 5_400_000, 86_400_000 * 14].map(humanDuration), [
      "0",
      "250ms",
      "1.5s",
      "30s",
      "1h30m",
      "14d",
    ]);
  });

  it("--at takes an RFC 3339 time or a duration from now, in the future only", () => {
    const now = Date.parse("2030-01-01T00:00:00Z");
    assert.equal(deliveryTime("90s", now), now + 90_000);
    assert.equal(deliveryTime("1h30m", now), now + 5_400_000);
    assert.equal(deliveryTime("2030-01-02T00:00:00+01:00", now), Date.parse("2030-01-01T23:00:00Z"));
    for (const bad of ["0", "-5m", "2029-12-31T23:59:59Z", "tomorrow", "2030-13-45T00:00:00Z"])
      assert.throws(() => deliveryTime(bad, now), Error, bad);
  });

  it("--seq and --prop lists accumulate over repeated flags", () => {
    assert.deepEqual(seqList("3", seqList("1,2")), [1, 2, 3]);
    assert.deepEqual(properties("c=d=e", properties("a=1,b=")), { a: "1", b: "", c: "d=e" });
    assert.throws(() => seqList("0"));
    assert.throws(() => properties("novalue"));
  });

  it("a progress bar is drawn on a terminal only", () => {
    const written: string[] = [];
    const tty = { isTTY: true, write: (s: string) => written.push(s) } as unknown as NodeJS.WriteStream;
    const bar = new Progress("sending", 4, tty);
    bar.add(4);
    bar.finish();
    assert.match(written.join(""), /\rsending \[#{24}\] 100% 4\/4/);
    const piped: string[] = [];
    const pipe = { isTTY: false, write: (s: string) => piped.push(s) } as unknown as NodeJS.WriteStream;
    const quiet = new Progress("sending", 4, pipe);
    quiet.add(4);
    quiet.finish();
    assert.deepEqual(piped, []);
  });
});
