import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Page } from "playwright-core";
import { silentLogger } from "../../src/engine/logger.js";
import type { SqliteBroker } from "../../src/engine/sqlite-broker.js";
import type { Dashboard } from "../../src/jobs/dashboard.js";
import { Queue } from "../../src/jobs/index.js";
import type { Worker } from "../../src/jobs/worker.js";
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
      );
    worker = queue.runWorker({ concurrency: 2, heartbeatIntervalMs: 500 });
    dashboard = await queue.dashboard({ port: 0, logger: silentLogger });
    b = await launch();
    page = b.page;
  });
  after(async () => {
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

  it("lists workers with their heartbeats on the Workers page", async () => {
    await page.goto(`${dashboard.apiUrl}/ui/#/workers`);
    await page.getByRole("heading", { name: "Workers", level: 1 }).waitFor();
    const workers = page.getByRole("region", { name: "Workers" });
    await workers.getByRole("row").nth(1).waitFor();
    const shown = await text(workers);
    assert.match(shown, /active/);
    assert.match(shown, new RegExp(String(process.pid)));
    assert.match(shown, /(now|ago)/);
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
