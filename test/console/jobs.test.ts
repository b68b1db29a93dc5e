import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Page } from "playwright-core";
import { silentLogger } from "../../src/contract/logger.js";
import type { Dashboard } from "../../src/jobs/dashboard.js";
import { currentJob, Queue } from "../../src/jobs/index.js";
import type { Worker } from "../../src/jobs/worker.js";
import type { SqliteBroker } from "../../src/store/sqlite/sqlite-broker.js";
import {
  type Browser,
  type ConsoleServer,
  ensureBuilt,
  launch,
  serveConsole,
  shot,
  signIn,
  text,
} from "./harness.js";

// The console mounted from the job face (`queue.dashboard()`, auth off), and signed in to another
// broker's URL across origins (CORS).

describe("console: jobs, from queue.dashboard() (headless Chromium)", () => {
  let dir: string;
  let queue: Queue<any>;
  let worker: Worker;
  let dashboard: Dashboard;
  let b: Browser;
  let page: Page;
  let failing = true;
  // The "crunch" job logs and reports progress, then waits here until the test lets it finish.
  let finishCrunch!: () => void;
  const crunchMayFinish = new Promise<void>((resolve) => {
    finishCrunch = resolve;
  });

  before(async () => {
    await ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), "mqlite-console-jobs-"));
    queue = new Queue({ dbPath: join(dir, "jobs.db") })
      .task("resize", (width: number, height: number) => ({ width: width / 2, height: height / 2 }))
      .task(
        "charge",
        (amount: number) => {
          if (failing) throw new Error(`card declined for ${amount}`);
          return { charged: amount };
        },
        { maxRetries: 1, retryBackoff: { baseMs: 10, maxMs: 10 } },
      )
      .task("crunch", async (lines: number) => {
        for (let i = 1; i <= lines; i++) await currentJob().log(`step ${i} of ${lines}`);
        await currentJob().updateProgress(40);
        await crunchMayFinish;
        await currentJob().log("done");
        await currentJob().updateProgress(100);
        return "crunched";
      });
    worker = queue.runWorker({ concurrency: 2, heartbeatIntervalMs: 500 });
    dashboard = await queue.dashboard({ port: 0, logger: silentLogger });
    b = await launch();
    page = b.page;
  });
  after(async () => {
    finishCrunch();
    await b?.close();
    await dashboard?.close();
    await worker?.stop();
    await queue?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("queue.dashboard() serves the console over the queue's broker; with auth off no token is needed", async () => {
    assert.match(dashboard.url, /^http:\/\/127\.0\.0\.1:\d+\/ui\/$/);
    await signIn(page, dashboard.apiUrl, "");
    await page.getByText("auth off").waitFor();
  });

  it("sees a job complete, then its detail: arguments, notes, result and timeline", async () => {
    const id = await queue.enqueue("resize", [640, 480], {
      notes: { customer: "acme", order: 7 },
      metadata: "batch-2024-03",
    });
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Jobs" }).click();
    const row = page.locator(`tr[data-job="${id}"]`);
    await page.locator(`tr[data-job="${id}"][data-status="complete"]`).waitFor();
    assert.match(await text(row), /resize[\s\S]*default[\s\S]*complete/);
    await shot(page, "jobs", { fullPage: true });

    await row.getByRole("link", { name: `#${id}` }).click();
    await page.getByRole("heading", { name: `Job #${id} complete` }).waitFor();
    const args = page.getByRole("region", { name: "Arguments" });
    assert.match(await text(args.locator("pre")), /\[\s*640,\s*480\s*\]/);
    assert.match(await text(page.getByTestId("notes")), /acme/);
    const result = page.getByRole("region", { name: "Result" });
    assert.match(await text(result.locator("pre")), /"width": 320/);
    const timeline = await text(page.getByRole("region", { name: "Timeline" }));
    for (const step of ["Created", "Started", "Completed"]) assert.ok(timeline.includes(step), step);
    await shot(page, "job-detail", { fullPage: true });
  });

  it("searches jobs by notes and metadata, and filters by status, queue and task", async () => {
    await queue.enqueue("resize", [10, 10], { notes: { customer: "globex" } });
    await page.goto(`${dashboard.apiUrl}/ui/#/jobs`);
    await page.locator('tr[data-status="complete"]').nth(1).waitFor();
    await page.getByLabel("Search notes and metadata").fill("globex");
    await page.waitForFunction(() => document.querySelectorAll("table.jobs tbody tr").length === 1);
    await page.getByLabel("Search notes and metadata").fill("batch-2024");
    await page.waitForFunction(
      () =>
        document.querySelectorAll("table.jobs tbody tr").length === 1 &&
        !document.querySelector("table.jobs tbody")?.textContent?.includes("globex"),
    );
    await page.getByLabel("Search notes and metadata").fill("");
    await page.getByLabel("Task").fill("charge");
    await page.getByText("No jobs match.").waitFor();
    await page.getByLabel("Task").fill("");
    await page.getByLabel("Status", { exact: true }).selectOption("complete");
    await page.getByLabel("Queue", { exact: true }).selectOption("default");
    await page.waitForFunction(
      () => document.querySelectorAll('table.jobs tbody tr[data-status="complete"]').length === 2,
    );
    assert.ok(page.url().includes("status=complete"), "the filter is kept in the address");
  });

  it("shows a dead job's errors of every attempt, and retries it", async () => {
    const id = await queue.enqueue("charge", [99]);
    await page.goto(`${dashboard.apiUrl}/ui/#/jobs/${id}`);
    await page.getByRole("heading", { name: `Job #${id} dead` }).waitFor();
    const errors = page.getByTestId("job-errors").getByRole("listitem");
    await errors.nth(1).waitFor();
    assert.match(await text(errors.nth(0)), /Attempt 1[\s\S]*card declined for 99/);
    assert.match(await text(errors.nth(1)), /Attempt 2[\s\S]*card declined for 99/);
    // The stored `{"errtype","message","traceback"}` is shown as a message and a stack, not as JSON.
    const first = errors.nth(0);
    assert.equal(await text(first.locator(".error-message")), "Error: card declined for 99");
    assert.equal(await first.getByText(/errtype|\\n/).count(), 0, "no raw JSON, no literal \\n");
    await first.getByText("Stack trace").click();
    const stack = await text(first.locator("pre"));
    assert.ok(stack.split("\n").length > 2, "the stack keeps its line breaks");
    assert.match(stack, /^Error: card declined for 99\n\s+at /);
    await shot(page, "job-dead", { fullPage: true });

    failing = false;
    await page.getByRole("button", { name: "Retry" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Retry" }).click();
    await page.getByRole("heading", { name: `Job #${id} complete` }).waitFor();
    assert.deepEqual(await queue.result(id), { charged: 99 });
  });

  it("cancels a pending job", async () => {
    const id = await queue.enqueue("resize", [1, 1], { delayMs: 3_600_000 });
    await page.goto(`${dashboard.apiUrl}/ui/#/jobs/${id}`);
    await page.getByRole("heading", { name: `Job #${id} pending` }).waitFor();
    await page.getByRole("button", { name: "Cancel" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Cancel job" }).click();
    await page.getByRole("heading", { name: `Job #${id} cancelled` }).waitFor();
    // Kept like a job cancelled from the job face: a sweep right away leaves it.
    await ((await queue.broker()) as SqliteBroker).runMaintenanceOnce();
    assert.equal((await queue.getJob(id))?.status, "cancelled");
  });

  it("lists only job queues: plain queue messages and their dead letters are not jobs", async () => {
    const broker = await queue.broker();
    await broker.createQueue("plain-orders");
    await broker.send("plain-orders", [{ body: "x", subject: "order.created" }, { body: "y" }]);
    const [m] = await broker.receive("plain-orders");
    await broker.reject("plain-orders", m!.seqNumber, m!.lockToken!, { reason: "Bad" });
    const jobsDead = (await broker.stats("default")).deadLettered;
    await page.goto(`${dashboard.apiUrl}/ui/#/jobs`);
    await page.locator("table.jobs tbody tr").first().waitFor();
    await page.waitForFunction(
      (n) => document.querySelector('[data-job-status="dead"]')?.textContent === String(n),
      jobsDead,
    );
    const queues = await page.getByLabel("Queue", { exact: true }).locator("option").allTextContents();
    assert.ok(!queues.includes("plain-orders"), `plain queue not offered: ${queues.join(", ")}`);
    assert.ok(queues.includes("default"));
    assert.equal(await page.locator("table.jobs tbody").getByText("plain-orders").count(), 0);
    // The Queues page still lists it: it is a queue, not a job queue.
    await page.goto(`${dashboard.apiUrl}/ui/#/queues`);
    await page.getByRole("link", { name: "plain-orders" }).waitFor();
  });

  it("follows the status filter in the address, even when only the query changes", async () => {
    await page.goto(`${dashboard.apiUrl}/ui/#/jobs?status=complete`);
    await page.locator('table.jobs tbody tr[data-status="complete"]').first().waitFor();
    await page.evaluate(() => {
      location.hash = "#/jobs?status=cancelled";
    });
    await page.locator('.status-pill[aria-pressed="true"]').filter({ hasText: "cancelled" }).waitFor();
    await page.waitForFunction(() => {
      const list = [...document.querySelectorAll("table.jobs tbody tr")];
      return list.length > 0 && list.every((r) => r.getAttribute("data-status") === "cancelled");
    });
    assert.equal(await page.getByLabel("Status", { exact: true }).inputValue(), "cancelled");
    await page.locator(".status-pill").filter({ hasText: "complete" }).click();
    await page.waitForFunction(() => location.hash === "#/jobs?status=complete");
    await page.locator('table.jobs tbody tr[data-status="complete"]').first().waitFor();
  });

  it("lists periodic jobs with their next runs, and pauses and resumes one", async () => {
    queue.registerPeriodic("nightly-resize", "resize", "0 3 * * *", { args: [8, 8] });
    await page.goto(`${dashboard.apiUrl}/ui/#/periodic`);
    const row = page.locator('tr[data-periodic="nightly-resize"]');
    await row.waitFor();
    const next = row.getByTestId("next-runs").getByRole("listitem");
    await next.nth(2).waitFor();
    const first = queue.listPeriodic().find((p) => p.name === "nightly-resize")!.nextRun!;
    const d = new Date(first);
    const p2 = (n: number) => String(n).padStart(2, "0");
    assert.ok(
      (await text(next.nth(0))).startsWith(
        `${d.getFullYear()}-${p2(d.getMonth() + 1)}-${p2(d.getDate())} ${p2(d.getHours())}:00:00`,
      ),
      "the first next run is the scheduler's own",
    );
    assert.match(await text(row), /resize[\s\S]*0 3 \* \* \*[\s\S]*default[\s\S]*active/);
    await shot(page, "periodic", { fullPage: true });

    await row.getByRole("button", { name: "Pause nightly-resize" }).click();
    await row.getByText("paused", { exact: true }).waitFor();
    assert.equal(queue.listPeriodic().find((p) => p.name === "nightly-resize")?.enabled, false);
    await row.getByText("none while paused").waitFor();
    await row.getByRole("button", { name: "Resume nightly-resize" }).click();
    await row.getByText("active", { exact: true }).waitFor();
    assert.equal(queue.listPeriodic().find((p) => p.name === "nightly-resize")?.enabled, true);
    queue.deletePeriodic("nightly-resize");
  });

  it("shows an interval periodic job with its interval and next runs", async () => {
    queue.registerPeriodic("pulse", "resize", { everyMs: 90_000, args: [1, 1] });
    await page.goto(`${dashboard.apiUrl}/ui/#/periodic`);
    const row = page.locator('tr[data-periodic="pulse"]');
    await row.waitFor();
    await row.getByTestId("next-runs").getByRole("listitem").nth(2).waitFor();
    assert.match(await text(row), /resize[\s\S]*every 90 s[\s\S]*default[\s\S]*active/);
    queue.deletePeriodic("pulse");
  });

  it("stacks the jobs table into labelled rows at 390 px", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.goto(`${dashboard.apiUrl}/ui/#/jobs`);
      await page.locator("table.jobs tbody tr").first().waitFor();
      const layout = await page.evaluate(() => ({
        page: document.documentElement.scrollWidth - window.innerWidth,
        label: getComputedStyle(document.querySelector('table.jobs td[data-label="Task"]')!, "::before")
          .content,
      }));
      assert.ok(layout.page <= 1, `no page overflow (${layout.page}px)`);
      assert.equal(layout.label, '"Task"');
      await shot(page, "mobile-jobs");
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  it("lists workers with their heartbeats on the Workers page", async () => {
    await page.goto(`${dashboard.apiUrl}/ui/#/workers`);
    await page.getByRole("heading", { name: "Workers", level: 1 }).waitFor();
    const workers = page.getByRole("region", { name: "Workers" });
    await workers.getByRole("row").nth(1).waitFor();
    const shown = await text(workers);
    assert.match(shown, /active/);
    assert.match(shown, new RegExp(String(process.pid)));
    assert.match(shown, /(now|ago)/);
    await shot(page, "workers", { fullPage: true });
  });

  it("shows a running job's progress bar and its log lines, paged, and keeps them once it finishes", async () => {
    const id = await queue.enqueue("crunch", [55]);
    await page.goto(`${dashboard.apiUrl}/ui/#/jobs/${id}`);
    await page.getByRole("heading", { name: `Job #${id} running` }).waitFor();
    const bar = page.getByRole("progressbar", { name: "Progress" });
    await page.locator('[data-testid="job-progress"] progress[value="40"]').waitFor();
    assert.equal(await bar.getAttribute("max"), "100");
    assert.equal(await text(page.getByTestId("job-progress").locator(".pct")), "40%");

    // One page of 50 lines, oldest first, each with its time; "Load more" reads the rest.
    const log = page.getByRole("region", { name: "Log (55)" });
    await log.waitFor();
    const lines = page.getByTestId("job-log").getByRole("listitem");
    assert.equal(await lines.count(), 50);
    assert.match(await text(lines.nth(0)), /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\s*step 1 of 55$/);
    assert.match(await text(lines.nth(49)), /step 50 of 55$/);
    assert.equal(await text(log.getByTestId("log-count")), "50 of 55 lines");
    await log.getByRole("button", { name: "Load more" }).click();
    await lines.nth(54).waitFor();
    assert.match(await text(lines.nth(54)), /step 55 of 55$/);
    assert.equal(await log.getByRole("button", { name: "Load more" }).count(), 0);
    await shot(page, "job-progress", { fullPage: true });

    // The page refreshes while the job runs: the new line and the last progress appear, and what
    // "Load more" read stays.
    finishCrunch();
    await page.getByRole("heading", { name: `Job #${id} complete` }).waitFor();
    await page.getByRole("region", { name: "Log (56)" }).waitFor();
    await lines.nth(55).waitFor();
    assert.equal(await lines.count(), 56);
    assert.match(await text(lines.nth(55)), /done$/);
    await page.locator('[data-testid="job-progress"] progress[value="100"]').waitFor();
    assert.equal(await text(page.getByTestId("job-progress").locator(".pct")), "100%");
  });

  it("shows task and log subscriptions with their backlog, cursor and lag", async () => {
    const broker = await queue.broker();
    await broker.subscribeTask("signups", "welcome-mail", { task: "resize", queue: "mail" });
    await broker.subscribeLog("signups", "analytics");
    await broker.publish("signups", { body: "[2, 2]", subject: "user.created" });
    await broker.publish("signups", { body: "[4, 4]", subject: "user.created" });
    await page.goto(`${dashboard.apiUrl}/ui/#/topics`);
    const log = page.locator('tr[data-sub="analytics"]');
    await log.getByTestId("backlog").filter({ hasText: "lag 2" }).waitFor();
    const task = page.locator('tr[data-sub="welcome-mail"]');
    await task.getByText("task resize").waitFor();
    assert.match(await text(task), /durable/);
    await shot(page, "job-topics", { fullPage: true });
  });

  it("signs in to another broker's URL (CORS) and reads its queues", async () => {
    let other: ConsoleServer | undefined;
    try {
      other = await serveConsole({ tokens: ["other-token"], cors: "*", ui: false });
      await other.broker.createQueue("elsewhere");
      await page.getByRole("button", { name: "Sign out" }).click();
      await signIn(page, dashboard.apiUrl, "other-token", other.url);
      await page.locator(".live-dot.live").waitFor();
      await page.getByRole("link", { name: "elsewhere" }).waitFor();
      assert.ok(page.url().startsWith(dashboard.apiUrl), "the page stays on its own origin");
    } finally {
      await page.getByRole("button", { name: "Sign out" }).click();
      await other?.close();
    }
    assert.deepEqual(b.errors, []);
  });
});
