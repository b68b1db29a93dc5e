import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { after, afterEach, describe, it } from "node:test";
import { Queue } from "../../src/jobs/index.js";
import { DEFAULT_TIMEOUT_MS } from "../../src/jobs/job-record.js";
import { collectLines, spawnChild } from "../support/child.js";
import { tempDir } from "../support/temp.js";
import { eventually } from "./helpers.js";

/** The lease the worker processes take: short, so that the tests are quick. */
const LEASE_MS = 2000;
/** How long past the lease a re-run may take to start (the reaper's wake-up, a claim, a slow machine). */
const SLACK_MS = 5000;

/** Every child started, so that a failed test leaves none running (they would keep the run alive). */
const children: ChildProcess[] = [];
const producers: Queue[] = [];

/** Starts a worker child with a short lease; resolves once it printed READY. */
async function worker(path: string) {
  const child = spawnChild("job-worker-child.ts", [path, "--lease-ms", String(LEASE_MS)]);
  children.push(child);
  const lines: { text: string; at: number }[] = [];
  let ready: () => void = () => {};
  const isReady = new Promise<void>((r) => {
    ready = r;
  });
  const done = collectLines(child, (text) => {
    lines.push({ text, at: performance.now() });
    if (text.startsWith("READY")) ready();
  });
  await isReady;
  const started = (id: string) => lines.find((l) => l.text.startsWith(`START ${id} `));
  return { child, lines, done, started };
}

/** The worker that ran attempt 2 of `id`. */
async function rescuerOf(id: string, ...workers: Awaited<ReturnType<typeof worker>>[]) {
  let found: Awaited<ReturnType<typeof worker>> | undefined;
  await eventually(
    () => {
      found = workers.find((w) =>
        w.lines.some((l) => l.text.startsWith(`START ${id} `) && l.text.endsWith(" 2")),
      );
      return found !== undefined;
    },
    30_000,
    "a second attempt",
  );
  return found!;
}

function stop(child: ChildProcess): void {
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
}

describe("jobs: stall recovery across worker processes", () => {
  const tmp = tempDir();
  after(() => tmp.cleanup());
  afterEach(async () => {
    for (const q of producers.splice(0)) await q.close();
    for (const child of children.splice(0)) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      child.kill("SIGCONT");
      child.kill("SIGKILL");
    }
  });

  it("a job whose worker is SIGKILLed runs again within leaseMs, though its timeout is the default", async () => {
    const path = tmp.file("sigkill.db");
    const producer = new Queue({ dbPath: path });
    producers.push(producer);
    const victim = await worker(path);
    // Sleeps a minute on its first attempt, under the default 300 s timeout.
    const id = await producer.enqueue("stall", [60_000]);
    assert.equal((await producer.getJob(id))?.timeoutMs, DEFAULT_TIMEOUT_MS);
    await eventually(() => victim.started(id) !== undefined, 10_000, "the victim to start");
    const rescuer = await worker(path);
    victim.child.kill("SIGKILL");
    const killedAt = performance.now();
    assert.equal((await victim.done).signal, "SIGKILL");
    // Waited for generously: the bound that matters is asserted on when the re-run started.
    assert.equal(await producer.result(id, { timeoutMs: 30_000 }), rescuer.child.pid);
    // Its start line comes through a pipe, which can trail the result stored in the file.
    await eventually(() => rescuer.started(id) !== undefined, 10_000, "the rescuer's start line");
    const rerun = rescuer.started(id)!;
    assert.equal(rerun.text.split(" ")[3], "2", "the second attempt");
    const waited = rerun.at - killedAt;
    assert.ok(waited < LEASE_MS + SLACK_MS, `re-run after ${Math.round(waited)} ms`);
    assert.equal(victim.lines.filter((l) => l.text.startsWith("END")).length, 0);
    stop(rescuer.child);
    await rescuer.done;
    await producer.close();
  });

  it("a worker that lost its lease (stuck past it) cannot store the job's outcome after the re-run", async () => {
    const path = tmp.file("paused.db");
    const producer = new Queue({ dbPath: path });
    producers.push(producer);
    // Both run before the job exists: whichever claims it freezes (its whole process, for three
    // leases), the other rescues it.
    const [a, b] = await Promise.all([worker(path), worker(path)]);
    const id = await producer.enqueue("freeze", [LEASE_MS * 3]);
    // The frozen worker renews nothing: its lease lapses and the rescuer runs the job.
    assert.equal(await producer.result(id, { timeoutMs: 30_000 }), (await rescuerOf(id, a, b)).child.pid);
    const stale = [a, b].find((w) => w.lines.some((l) => l.text === `START ${id} ${w.child.pid} 1`));
    assert.ok(stale, "a worker ran the first attempt");
    const rescuer = stale === a ? b : a;
    // Thawed, the first worker's handler ends; its lock token is stale, so its outcome is refused.
    await eventually(
      () => stale.lines.some((l) => l.text.startsWith(`END ${id} `)),
      10_000,
      "the first handler to end",
    );
    stop(stale.child);
    const staleEnd = await stale.done;
    // Whichever comes first once resumed: a renewal that finds the lease lost (the outcome is not
    // even tried), or the completion, which the fence refuses.
    const warning = staleEnd.stderr.split("\n").find((l) => l.includes(`"jobId":"${id}"`));
    assert.ok(warning, `the lost outcome is logged; stderr: ${staleEnd.stderr}`);
    assert.match(
      warning,
      /a job's lease was lost; its outcome is not stored|could not store a job's outcome.*LockLostError: mqlite: lock lost/,
    );
    const job = await producer.getJob(id);
    assert.equal(job?.status, "complete");
    assert.equal(job?.retryCount, 1, "one failed-over attempt, then the rescuer's");
    assert.equal(await producer.result(id), rescuer.child.pid, "the rescuer's result stands");
    stop(rescuer.child);
    await rescuer.done;
    await producer.close();
  });
});
