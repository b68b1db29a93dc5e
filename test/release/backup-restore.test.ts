/**
 * The README's backup and restore, step by step: `VACUUM INTO` from a second connection while the
 * broker runs and writes, then the restore (broker stopped, the file and its -wal/-shm moved aside,
 * the backup copied in its place, broker started). The statement is the one the README gives the
 * sqlite3 shell, run here through better-sqlite3 (the same SQLite), so the test needs no sqlite3
 * binary.
 */
import assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import Database from "better-sqlite3";
import { silentLogger } from "../../src/contract/logger.js";
import type { Message, MessageState } from "../../src/contract/types.js";
import { openBroker } from "../../src/open.js";
import { tempDir } from "../support/temp.js";
import { root, run } from "./harness.js";

/** A second process that runs one statement on the database, as `sqlite3 <file> "<sql>"` does. */
const BACKUP_PROGRAM = `const Database = require("better-sqlite3");
const db = new Database(process.argv[1]);
db.exec(process.argv[2]);
db.close();`;

const open = (file: string) => openBroker(file, { logger: silentLogger });
type Opened = Awaited<ReturnType<typeof open>>;

/** Every message of `queue` in `state`, page by page. */
async function peekAll(broker: Opened, queue: string, state: MessageState): Promise<Message[]> {
  const all: Message[] = [];
  for (let fromSeq = 0; ; ) {
    const page = await broker.peek(queue, { state, fromSeq, max: 1000 });
    all.push(...page);
    if (page.length < 1000) return all;
    fromSeq = page[page.length - 1]!.seqNumber + 1;
  }
}
const bodies = (messages: { body: Buffer }[]) => messages.map((m) => m.body.toString()).sort();

describe("backup with VACUUM INTO and restore (README, Deploy)", () => {
  it("the README gives the backup statement this test runs", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    assert.match(readme, /sqlite3 \/var\/lib\/mqlite\/mq\.db "VACUUM INTO '\/var\/backups\/mqlite\/mq-/);
    assert.match(readme, /mv mq\.db\* before-restore\//);
  });

  it("a backup taken while the broker writes restores every queue, subscription and message of that moment", async () => {
    const tmp = tempDir("mqlite-backup-");
    try {
      const live = tmp.file("mq.db");
      const backup = tmp.file("mq-backup.db");
      const broker = await open(live);
      await broker.createQueue("orders", { maxDeliveryCount: 3, lockDurationMs: 60_000 });
      await broker.subscribe("events", "eu", { filter: 'subject startsWith "eu."' });
      for (let i = 0; i < 20; i++) await broker.send("orders", { body: `order-${i}` });
      await broker.send("events", { body: "eu-event", subject: "eu.created" });
      await broker.send("events", { body: "us-event", subject: "us.created" });
      const [done, locked, dead] = await broker.receive("orders", { maxMessages: 3 });
      await broker.complete("orders", done!.seqNumber, done!.lockToken!);
      await broker.reject("orders", dead!.seqNumber, dead!.lockToken!, { reason: "bad" });

      // The backup, from another process (as the sqlite3 shell would be) while this one keeps sending:
      // one consistent snapshot, and the broker never stops.
      let writing = true;
      let sentDuring = 0;
      const writer = (async () => {
        while (writing) {
          await broker.send("orders", { body: `late-${sentDuring}` });
          sentDuring++;
          await new Promise((r) => setTimeout(r, 1));
        }
      })();
      while (sentDuring < 5) await new Promise((r) => setTimeout(r, 1));
      const shell = await run(process.execPath, ["-e", BACKUP_PROGRAM, live, `VACUUM INTO '${backup}'`], {
        cwd: root,
        timeoutMs: 60_000,
      });
      writing = false;
      await writer;
      await broker.close();
      assert.equal(shell.code, 0, shell.stderr);

      const copy = new Database(backup, { readonly: true });
      assert.equal(copy.pragma("integrity_check", { simple: true }), "ok");
      assert.equal(copy.pragma("journal_mode", { simple: true }), "delete", "a self-contained file");
      copy.close();
      assert.equal(existsSync(`${backup}-wal`), false);

      // Restore: the broker is stopped; the file and its side files go aside; the backup takes its place.
      const aside = tmp.file("before-restore");
      mkdirSync(aside);
      for (const name of readdirSync(tmp.dir).filter((n) => n.startsWith("mq.db")))
        renameSync(tmp.file(name), join(aside, name));
      copyFileSync(backup, live);

      const restored = await open(live);
      try {
        const [queue] = (await restored.listQueues()).filter((q) => q.name === "orders");
        assert.equal(queue?.maxDeliveryCount, 3);
        assert.equal(queue?.lockDurationMs, 60_000);
        const [sub] = await restored.listSubscriptions();
        assert.deepEqual([sub?.topic, sub?.name, sub?.filter], ["events", "eu", 'subject startsWith "eu."']);

        const active = bodies(await peekAll(restored, "orders", "active"));
        const late = active.filter((b) => b.startsWith("late-"));
        const before = active.filter((b) => b.startsWith("order-"));
        // Everything sent before the backup began is there; of the sends racing it, a prefix.
        assert.equal(before.length, 17);
        assert.ok(
          late.length >= 5 && late.length <= sentDuring,
          `${late.length} of ${sentDuring} late sends`,
        );
        for (let i = 0; i < late.length; i++) assert.ok(late.includes(`late-${i}`), `late-${i} missing`);
        assert.equal(active.includes(done!.body.toString()), false, "a completed message came back");

        const lockedNow = await restored.peek("orders", { state: "locked" });
        assert.deepEqual(
          lockedNow.map((m) => m.seqNumber),
          [locked!.seqNumber],
          "the message locked at backup time stays locked until its lock expires, then is redelivered",
        );
        const dlq = await restored.peek("orders", { state: "dead_lettered" });
        assert.deepEqual(
          dlq.map((m) => m.seqNumber),
          [dead!.seqNumber],
        );
        assert.deepEqual(bodies(await restored.peek("eu")), ["eu-event"]);

        // The restored broker takes new work.
        const [seq] = await restored.send("orders", { body: "after-restore" });
        assert.deepEqual(bodies(await restored.peek("orders", { fromSeq: seq! })), ["after-restore"]);
      } finally {
        await restored.close();
      }
    } finally {
      tmp.cleanup();
    }
  });
});
