import assert from "node:assert/strict";
import { once } from "node:events";
import { resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import {
  CborSerializer,
  JobCancelledError,
  JobFailedError,
  type Queue,
  Queue as QueueClass,
  QueueError,
  type SandboxedHandler,
} from "../../src/jobs/index.js";
import { SandboxPool } from "../../src/jobs/sandbox/pool.js";
import { collectLines, spawnChild } from "../support/child.js";
import { tempDir } from "../support/temp.js";
import { JOB_BROKER_SUBJECTS, type JobBroker } from "./broker-subjects.js";
import { eventually, tempQueue } from "./helpers.js";

// Sandboxed handlers run in real child processes, loaded from the fixtures below.
const HANDLERS = "test/fixtures/sandbox/handlers.ts";
const GREET = "test/fixtures/sandbox/greet.mjs";
const fast = { retryBackoff: { baseMs: 10, maxMs: 10 } };
const sandboxed = (name: string): SandboxedHandler => ({ file: HANDLERS, export: name });

/** True while a process with this pid exists. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw err;
  }
}

/** The errtype of each failed attempt of a job. */
async function attemptErrors(queue: Queue<any>, id: string): Promise<{ errtype: string; message: string }[]> {
  return (await queue.getJobErrors(id)).map(
    (e) => JSON.parse(e.error) as { errtype: string; message: string },
  );
}

/** The pid a sandboxed handler wrote into its job's log (`pid N`). */
async function loggedPid(queue: Queue<any>, id: string): Promise<number> {
  const line = await eventually(async () => (await queue.getJobLogs(id)).logs[0], 15_000, "the pid line");
  return Number(String(line).replace("pid ", ""));
}

for (const subject of JOB_BROKER_SUBJECTS) {
  describe(`jobs: sandboxed handlers (${subject.name})`, () => {
    let b: JobBroker;
    let n = 0;
    before(async () => {
      b = await subject.open();
    });
    after(() => b.close());

    it("runs default and named exports in a child process, and retries a thrown error", async () => {
      n++;
      const queue = new QueueClass({ broker: b.broker, namespace: `sb${n}` })
        .task("greet", { file: GREET })
        .task("add", sandboxed("add"))
        .task("flaky", sandboxed("flaky"), fast);
      const worker = queue.runWorker({ concurrency: 2 });
      try {
        const greeting = await queue.result<string>(await queue.enqueue("greet", ["ada"]), {
          timeoutMs: 20_000,
        });
        const [, pid] = /^hello ada from (\d+)$/.exec(greeting) ?? [];
        assert.ok(pid, `a greeting with a pid: ${greeting}`);
        assert.notEqual(Number(pid), process.pid, "the handler ran in another process");
        assert.equal(await queue.result(await queue.enqueue("add", [2, 3]), { timeoutMs: 20_000 }), 5);
        const flaky = await queue.enqueue("flaky", []);
        assert.equal(await queue.result(flaky, { timeoutMs: 20_000 }), "ok on attempt 2");
        assert.deepEqual(
          (await attemptErrors(queue, flaky)).map((e) => [e.errtype, e.message]),
          [["RangeError", "boom on attempt 1"]],
          "the thrown error is recorded as the handler threw it",
        );
      } finally {
        await worker.stop();
        await queue.close();
      }
    });

    it("a process.exit fails the attempt, the job is retried, and the worker goes on serving", async () => {
      n++;
      const queue = new QueueClass({ broker: b.broker, namespace: `sb${n}` })
        .task("exitFirst", sandboxed("exitFirst"), fast)
        .task("add", sandboxed("add"));
      const worker = queue.runWorker({ concurrency: 2 });
      try {
        const id = await queue.enqueue("exitFirst", []);
        const pid = await queue.result<number>(id, { timeoutMs: 20_000 });
        assert.notEqual(pid, process.pid);
        const errors = await attemptErrors(queue, id);
        assert.equal(errors.length, 1);
        assert.equal(errors[0]!.errtype, "SandboxCrashedError");
        assert.match(errors[0]!.message, /exited with code 3/);
        assert.equal(await queue.result(await queue.enqueue("add", [20, 22]), { timeoutMs: 20_000 }), 42);
        assert.equal(worker.activeCount, 0);
      } finally {
        await worker.stop();
        await queue.close();
      }
    });

    it("an infinite loop is killed at its timeout and the next job is served", async () => {
      n++;
      const queue = new QueueClass({ broker: b.broker, namespace: `sb${n}` })
        .task("spin", sandboxed("spin"), { timeoutMs: 3000, maxRetries: 0 })
        .task("spinFirst", sandboxed("spinFirst"), { ...fast, timeoutMs: 3000 })
        .task("add", sandboxed("add"));
      // One at a time, so that the warm-up's process (its module loaded) runs the loop.
      const worker = queue.runWorker({ concurrency: 1 });
      try {
        assert.equal(await queue.result(await queue.enqueue("add", [1, 1]), { timeoutMs: 20_000 }), 2);
        const spin = await queue.enqueue("spin", []);
        const pid = await loggedPid(queue, spin);
        await assert.rejects(queue.result(spin, { timeoutMs: 20_000 }), JobFailedError);
        assert.deepEqual(
          (await attemptErrors(queue, spin)).map((e) => e.errtype),
          ["JobTimeoutError"],
        );
        await eventually(() => !isAlive(pid), 5000, "the looping sandbox killed");
        const again = await queue.enqueue("spinFirst", []);
        assert.equal(await queue.result(again, { timeoutMs: 30_000 }), "recovered on attempt 2");
        assert.equal(await queue.result(await queue.enqueue("add", [2, 2]), { timeoutMs: 20_000 }), 4);
      } finally {
        await worker.stop();
        await queue.close();
      }
    });
  });
}

describe("jobs: sandboxed handlers in depth (embedded)", () => {
  /** A queue on a fresh file with a worker; the queue is closed (sandboxes too) after `body`. */
  async function withQueue(
    setup: (queue: Queue) => Queue<any>,
    body: (queue: Queue<any>) => Promise<void>,
    options: ConstructorParameters<typeof QueueClass>[0] = {},
  ): Promise<void> {
    const t = tempQueue(options);
    const queue = setup(t.queue);
    queue.runWorker({ concurrency: 2 });
    try {
      await body(queue);
    } finally {
      await t.cleanup();
    }
  }

  it("ends a sandbox left idle for the pool's idle time", async () => {
    const pool = new SandboxPool(300);
    const sandbox = pool.acquire();
    // An idle sandbox and its timer keep no process alive: hold this one while the test waits.
    const hold = setInterval(() => {}, 1000);
    try {
      const pid = sandbox.pid!;
      assert.ok(isAlive(pid));
      pool.release(sandbox);
      assert.equal(pool.size, 1, "parked, not ended");
      assert.equal(pool.acquire(), sandbox, "an idle sandbox is taken again");
      pool.release(sandbox);
      await sandbox.exited;
      assert.equal(pool.size, 0);
      assert.ok(!isAlive(pid), "the idle process was ended");
    } finally {
      clearInterval(hold);
      await pool.close();
    }
  });

  it("reuses an idle sandbox for the next job, replaces a crashed one, and ends them at close", async () => {
    const pids: number[] = [];
    const t = tempQueue();
    const queue = t.queue.task("pid", sandboxed("pid")).task("exitFirst", sandboxed("exitFirst"), fast);
    queue.runWorker({ concurrency: 1 });
    try {
      pids.push(await queue.result<number>(await queue.enqueue("pid", []), { timeoutMs: 20_000 }));
      pids.push(await queue.result<number>(await queue.enqueue("pid", []), { timeoutMs: 20_000 }));
      assert.equal(pids[0], pids[1], "the second job ran in the first job's process");
      const crashed = await queue.enqueue("exitFirst", []);
      pids.push(await queue.result<number>(crashed, { timeoutMs: 20_000 }));
      assert.ok(!isAlive(pids[0]!), "the process that exited is gone");
      assert.notEqual(pids[2], pids[0], "a fresh process ran the retry");
      assert.ok(isAlive(pids[2]!), "the idle sandbox waits for the next job");
    } finally {
      await t.cleanup();
    }
    assert.ok(!isAlive(pids[2]!), "close() ended the idle sandbox");
  });

  for (const mode of ["exit", "throw"]) {
    it(`a worker process that ends (${mode}) takes its looping sandbox with it`, async () => {
      const tmp = tempDir("mqlite-sandbox-");
      let pid = 0;
      try {
        const child = spawnChild("sandbox-worker-child.ts", [tmp.file("jobs.db"), mode]);
        const lines: string[] = [];
        // Not the end of its output: a sandbox left behind would hold the worker's stdout open.
        const exited = once(child, "exit");
        void collectLines(child, (line) => lines.push(line));
        const [code] = await exited;
        assert.equal(code, mode === "exit" ? 0 : 1);
        pid = Number(lines.find((l) => l.startsWith("SANDBOX "))?.slice(8));
        assert.ok(pid > 0, `the sandbox's pid was printed: ${lines.join("\n")}`);
        await eventually(() => !isAlive(pid), 5000, "the sandbox gone with its worker");
      } finally {
        if (pid > 0 && isAlive(pid)) process.kill(pid, "SIGKILL");
        tmp.cleanup();
      }
    });
  }

  it("a native abort and an uncaught exception each fail the attempt only", async () => {
    await withQueue(
      (q) =>
        q
          .task("abortFirst", sandboxed("abortFirst"), fast)
          .task("uncaughtFirst", sandboxed("uncaughtFirst"), fast),
      async (queue) => {
        const aborted = await queue.enqueue("abortFirst", []);
        assert.equal(typeof (await queue.result(aborted, { timeoutMs: 20_000 })), "number");
        const [abortError] = await attemptErrors(queue, aborted);
        assert.equal(abortError?.errtype, "SandboxCrashedError");
        assert.match(abortError!.message, /killed by SIGABRT/);
        const uncaught = await queue.enqueue("uncaughtFirst", []);
        assert.equal(typeof (await queue.result(uncaught, { timeoutMs: 20_000 })), "number");
        const [uncaughtError] = await attemptErrors(queue, uncaught);
        assert.equal(uncaughtError?.errtype, "SandboxCrashedError");
        assert.match(uncaughtError!.message, /exited with code 70 during the job: Error: late boom/);
      },
    );
  });

  it("cancelling a running job kills its sandbox and the job ends cancelled", async () => {
    await withQueue(
      (q) => q.task("hang", sandboxed("hang")).task("add", sandboxed("add")),
      async (queue) => {
        const id = await queue.enqueue("hang", []);
        const pid = await loggedPid(queue, id);
        assert.ok(isAlive(pid));
        assert.equal(await queue.requestCancel(id), true);
        await assert.rejects(queue.result(id, { timeoutMs: 20_000 }), JobCancelledError);
        await eventually(() => !isAlive(pid), 5000, "the cancelled sandbox killed");
        assert.equal(await queue.result(await queue.enqueue("add", [3, 4]), { timeoutMs: 20_000 }), 7);
      },
    );
  });

  it("forwards currentJob() log, progress and validation errors to the job", async () => {
    await withQueue(
      (q) => q.task("report", sandboxed("report")).task("badProgress", sandboxed("badProgress")),
      async (queue) => {
        const progress: number[] = [];
        queue.on("job.progress", (e) => progress.push(e.progress));
        const id = await queue.enqueue("report", [4]);
        assert.equal(await queue.result(id, { timeoutMs: 20_000 }), 1);
        assert.deepEqual(
          (await queue.getJobLogs(id)).logs,
          [1, 2, 3, 4].map((i) => `step ${i} in report`),
        );
        assert.equal((await queue.getJob(id))?.progress, 100);
        assert.deepEqual(progress, [25, 50, 75, 100]);
        assert.equal(
          await queue.result(await queue.enqueue("badProgress", []), { timeoutMs: 20_000 }),
          "QueueError: progress must be a number within 0..100",
        );
      },
    );
  });

  it("refuses a currentJob() call made after its handler returned, even while the process runs the next job", async () => {
    const t = tempQueue();
    const queue = t.queue.task("strayLog", sandboxed("strayLog")).task("readStray", sandboxed("readStray"));
    queue.runWorker({ concurrency: 1 });
    try {
      const first = await queue.enqueue("strayLog", []);
      assert.equal(await queue.result(first, { timeoutMs: 20_000 }), "returned");
      const second = await queue.enqueue("readStray", []);
      assert.equal(
        await queue.result(second, { timeoutMs: 20_000 }),
        "QueueError: currentJob() was called after its handler returned: the job is over",
      );
      assert.deepEqual(
        (await queue.getJobLogs(second)).logs,
        [],
        "the late line did not land on the next job",
      );
      assert.deepEqual((await queue.getJobLogs(first)).logs, []);
    } finally {
      await t.cleanup();
    }
  });

  it("a flow's sandboxed parent reads its children's results", async () => {
    await withQueue(
      (q) => q.task("add", sandboxed("add")).task("sumChildren", sandboxed("sumChildren")),
      async (queue) => {
        const flow = await queue.enqueueFlow({
          task: "sumChildren",
          children: [
            { task: "add", args: [1, 2] },
            { task: "add", args: [3, 4] },
          ],
        });
        assert.equal(await queue.result(flow.id, { timeoutMs: 20_000 }), 10);
      },
    );
  });

  it("arguments and results cross with the queue's serializer (CBOR: BigInt and Date survive)", async () => {
    const when = new Date("2026-01-02T03:04:05.000Z");
    await withQueue(
      (q) => q.task("echo", sandboxed("echo")),
      async (queue) => {
        const out = await queue.result<{ value: unknown[] }>(
          await queue.enqueue("echo", [[2n ** 70n, when, "x"]]),
          { timeoutMs: 20_000 },
        );
        assert.deepEqual(out.value, [2n ** 70n, when, "x"]);
      },
      { serializer: new CborSerializer() },
    );
  });

  it("a custom serializer is loaded in the sandbox from its module", async () => {
    const serializerFile = "test/fixtures/sandbox/date-serializer.ts";
    const { default: DateJsonSerializer } = await import("../fixtures/sandbox/date-serializer.js");
    const day = new Date("2026-03-04T00:00:00.000Z");
    await withQueue(
      (q) => q.task("nextDay", { file: HANDLERS, export: "nextDay", serializer: serializerFile }),
      async (queue) => {
        const next = await queue.result(await queue.enqueue("nextDay", [day]), { timeoutMs: 20_000 });
        assert.deepEqual(next, new Date("2026-03-05T00:00:00.000Z"));
      },
      { serializer: new DateJsonSerializer() },
    );
  });

  it("accepts absolute paths, file URLs and CommonJS files; a missing export fails the attempt with SandboxLoadError", async () => {
    await withQueue(
      (q) =>
        q
          .task("abs", { file: resolve(HANDLERS), export: "add" })
          .task("url", { file: pathToFileURL(resolve(GREET)) })
          .task("urlText", { file: pathToFileURL(resolve(HANDLERS)).href, export: "add" })
          .task("cjs", { file: "test/fixtures/sandbox/legacy.cjs" })
          .task("cjsNamed", { file: "test/fixtures/sandbox/legacy.cjs", export: "triple" })
          .task("missing", { file: HANDLERS, export: "notAFunction" }, { maxRetries: 0 }),
      async (queue) => {
        assert.equal(await queue.result(await queue.enqueue("abs", [1, 2]), { timeoutMs: 20_000 }), 3);
        assert.match(
          await queue.result<string>(await queue.enqueue("url", ["bo"]), { timeoutMs: 20_000 }),
          /^hello bo from/,
        );
        assert.equal(await queue.result(await queue.enqueue("urlText", [5, 5]), { timeoutMs: 20_000 }), 10);
        assert.equal(await queue.result(await queue.enqueue("cjs", [21]), { timeoutMs: 20_000 }), 42);
        assert.equal(await queue.result(await queue.enqueue("cjsNamed", [5]), { timeoutMs: 20_000 }), 15);
        const missing = await queue.enqueue("missing", []);
        await assert.rejects(queue.result(missing, { timeoutMs: 20_000 }), JobFailedError);
        const [error] = await attemptErrors(queue, missing);
        assert.equal(error?.errtype, "SandboxLoadError");
        assert.match(error!.message, /no function exported as "notAFunction"/);
      },
    );
  });

  it("refuses a missing file, a non-file URL, an empty export and a custom serializer without its module", async () => {
    const t = tempQueue();
    try {
      assert.throws(() => t.queue.task("a", { file: "test/fixtures/sandbox/nope.js" }), QueueError);
      assert.throws(() => t.queue.task("b", { file: new URL("https://example.com/h.js") }), QueueError);
      assert.throws(() => t.queue.task("c", { file: HANDLERS, export: "" }), QueueError);
      assert.deepEqual(t.queue.registeredTasks(), [], "nothing was registered");
    } finally {
      await t.cleanup();
    }
    const custom = tempQueue({
      serializer: {
        serialize: (v) => Buffer.from(JSON.stringify(v)),
        deserialize: (b) => JSON.parse(String(b)),
      },
    });
    try {
      assert.throws(
        () => custom.queue.task("d", sandboxed("add")),
        /name its module in the sandbox's `serializer`/,
      );
    } finally {
      await custom.cleanup();
    }
  });
});
