import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import Database from "better-sqlite3";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { collectLines, spawnChild } from "../support/child.js";
import { tempDir } from "../support/temp.js";

describe("crash recovery", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());

  for (let round = 1; round <= 3; round++) {
    it(`round ${round}: SIGKILL mid sends and settles loses nothing acknowledged and redelivers what was in flight`, async () => {
      const path = tmp.file(`crash-${round}.db`);
      const setup = await openBroker(path, { background: false, logger: silentLogger });
      await setup.createQueue("crash", { lockDurationMs: 300, maxDeliveryCount: 100 });
      await setup.close();

      const child = spawnChild("crash-child.ts", [path]);
      let acks = 0;
      const killAt = 200 + Math.floor(Math.random() * 400);
      const done = collectLines(child, () => {
        if (++acks === killAt) child.kill("SIGKILL");
      });
      const result = await done;
      assert.equal(result.signal, "SIGKILL", `child ended on its own: ${result.stderr}`);

      const sent = new Map<number, number>();
      const completed = new Set<number>();
      const inFlight = new Set<number>();
      const received = new Set<number>();
      for (const line of result.lines) {
        const [kind, a, b] = line.split(" ");
        if (kind === "S") sent.set(Number(a), Number(b));
        else if (kind === "C") completed.add(Number(a));
        else if (kind === "L") inFlight.add(Number(a));
        else if (kind === "R") received.add(Number(a));
      }
      assert.ok(sent.size > 0);

      const raw = new Database(path, { readonly: true });
      assert.equal(raw.pragma("integrity_check", { simple: true }), "ok");
      raw.close();

      // Reopen after the leases lapsed: recovery reclaims them for redelivery.
      await new Promise((r) => setTimeout(r, 350));
      const broker = await openBroker(path, { background: false, logger: silentLogger });
      const remaining = new Map<number, string>();
      for (;;) {
        const batch = await broker.receive("crash", { maxMessages: 256 });
        if (batch.length === 0) break;
        for (const m of batch) {
          remaining.set(m.seqNumber, m.body.toString());
          await broker.complete("crash", m.seqNumber, m.lockToken!);
        }
      }
      // The dead process's block of sequence numbers is not handed out again, even where its
      // newest messages were completed (deleted) before it died.
      const [next] = await broker.send("crash", { body: "after the crash" });
      assert.ok(next! > Math.max(...sent.keys()), `sequence number ${next} was handed out before the crash`);
      await broker.close();

      for (const seq of completed) assert.ok(!remaining.has(seq), `completed message ${seq} reappeared`);
      // A complete can commit just before the kill, unacknowledged: at most the one in progress.
      let completedUnacknowledged = 0;
      for (const [seq, index] of sent) {
        if (completed.has(seq)) continue;
        if (!remaining.has(seq) && received.has(seq) && !inFlight.has(seq)) {
          completedUnacknowledged++;
          continue;
        }
        if (remaining.get(seq) !== `body-${index}`) {
          // What the file holds of it, for the failure's message (a row left locked, scheduled, ...).
          const file = new Database(path, { readonly: true });
          const row = file
            .prepare("SELECT state, delivery_count, locked_until, visible_at FROM messages WHERE id = ?")
            .get(seq);
          const reserved = file.prepare("SELECT name, reserved FROM sequences").all();
          file.close();
          // Its body under another number would be a numbering fault, not a lost write.
          const elsewhere = [...remaining].find(([, body]) => body === `body-${index}`)?.[0];
          assert.fail(
            `acknowledged send ${seq} was lost or changed: got ${remaining.get(seq)}, row ${JSON.stringify(row)}, ` +
              `received ${received.has(seq)}, its body under seq ${elsewhere}, sequences ${JSON.stringify(reserved)}, ` +
              `now ${Date.now()}, the child's last lines: ${result.lines.slice(-12).join(" | ")}`,
          );
        }
      }
      assert.ok(
        completedUnacknowledged <= 1,
        `${completedUnacknowledged} messages vanished without a complete`,
      );
      for (const seq of inFlight)
        assert.ok(remaining.has(seq), `in-flight message ${seq} was not redelivered`);
    });
  }
});
