import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { Queue, QueueFullError } from "../../src/jobs/index.js";
import { dropSchema, freshSchema, PG_DSN, requirePostgres } from "../postgres/pg.js";
import { collectLines, spawnChild } from "../support/child.js";
import { tempDir } from "../support/temp.js";
import { eventually } from "./helpers.js";

/** Runs the producer child to its end; resolves with its output lines. */
async function child(location: string, schema: string, ...args: string[]): Promise<string[]> {
  const proc = spawnChild("job-producer-child.ts", [location, schema, ...args]);
  const lines: string[] = [];
  let stderr = "";
  proc.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  await collectLines(proc, (l) => lines.push(l));
  assert.equal(proc.exitCode, 0, `child ${args.join(" ")} failed: ${stderr}`);
  return lines;
}

const stores: {
  name: string;
  open(): Promise<{ location: string; schema: string; cleanup(): Promise<void> }>;
}[] = [
  {
    name: "one SQLite file",
    async open() {
      const tmp = tempDir("mqlite-proc-");
      return { location: tmp.file("jobs.db"), schema: "-", cleanup: async () => tmp.cleanup() };
    },
  },
  {
    name: "one PostgreSQL database",
    async open() {
      await requirePostgres();
      const schema = freshSchema("mqproc");
      return { location: PG_DSN, schema, cleanup: () => dropSchema(schema) };
    },
  },
];

for (const store of stores) {
  describe(`jobs: metrics, maxPending and debounce across processes (${store.name})`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    after(async () => {
      for (const c of cleanups) await c();
    });

    it("another process's enqueue lands in the same debounce window, counts toward maxPending, and its worker's completions are counted", async () => {
      const s = await store.open();
      const queue = new Queue(
        s.schema === "-" ? { dbPath: s.location } : { dsn: s.location, schema: s.schema },
      )
        .task("report", (_change: { userId: string }) => {}, {
          debounce: "1m",
          debounceKey: "report:{userId}",
          debounceMaxWait: "1h",
        })
        .task("noop", () => {})
        .task("ok", () => {});
      cleanups.push(async () => {
        await queue.close();
        await s.cleanup();
      });
      // Debounce: one window across processes.
      const id = await queue.enqueue("report", [{ userId: "u1" }]);
      assert.deepEqual(await child(s.location, s.schema, "debounce", "u1"), [`ID ${id}`]);
      const [other] = await child(s.location, s.schema, "debounce", "u2");
      assert.notEqual(other, `ID ${id}`);
      // maxPending: every process's jobs count.
      queue.configureQueue("capped", { maxPending: 2 });
      await queue.enqueue("noop", [], { queue: "capped" });
      assert.match((await child(s.location, s.schema, "enqueue", "capped", "2"))[0]!, /^ID \d+$/);
      assert.deepEqual(await child(s.location, s.schema, "enqueue", "capped", "2"), ["FULL 2 2"]);
      await assert.rejects(queue.enqueue("noop", [], { queue: "capped" }), QueueFullError);
      // Metrics: a worker in another process counts what it completes.
      for (let i = 0; i < 3; i++) await queue.enqueue("ok", [], { queue: "m" });
      assert.deepEqual(await child(s.location, s.schema, "work", "m", "3"), ["DONE"]);
      await eventually(
        async () => (await queue.getMetrics("completed", { queue: "m" })).count === 3,
        10_000,
        "3 completions counted",
      );
      assert.equal((await queue.getMetrics("completed")).count, 3);
    });
  });
}
