import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Page } from "playwright-core";
import { type Browser, type ConsoleServer, launch, serveConsole, shot, text, WAIT } from "./harness.js";

// The console against a served broker with auth on, in one headless Chromium page: each test
// continues where the previous one left off.

const TOKEN = "console-e2e-token";

/** Clicks the confirmation dialog's button (every destructive or bulk action asks first). */
async function confirm(page: Page, name: string | RegExp): Promise<void> {
  const dialog = page.getByRole("dialog");
  await dialog.getByRole("button", { name }).click();
  await dialog.waitFor({ state: "hidden" });
}

describe("console: broker pages (headless Chromium)", () => {
  let s: ConsoleServer;
  let b: Browser;
  let page: Page;

  before(async () => {
    s = await serveConsole({ tokens: [TOKEN] });
    b = await launch();
    page = b.page;
  });
  after(async () => {
    await b?.close();
    await s?.close();
  });

  it("signs in with the broker URL (default: the page's origin) and a token; a wrong token is refused", async () => {
    await page.goto(`${s.url}/ui/`);
    assert.equal(await page.getByLabel("Broker URL").inputValue(), s.url);
    await page.getByLabel("Token").fill("wrong");
    await shot(page, "signin");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").filter({ hasText: "refused this token" }).waitFor();

    await page.getByLabel("Token").fill(TOKEN);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    const stored = await page.evaluate(() => sessionStorage.getItem("mqlite.console.session"));
    assert.deepEqual(JSON.parse(stored ?? "{}"), { url: s.url, token: TOKEN });
    await page.locator(".live-dot.live").waitFor();
    await page.getByText("bearer token").waitFor();
  });

  it("creates a queue with its config from the Queues page", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Queues" }).click();
    await page.getByRole("button", { name: "New queue" }).click();
    const form = page.getByRole("form", { name: "Create queue" });
    await form.getByLabel("Name").fill("orders");
    await form.getByLabel("Lock duration").fill("45s");
    await form.getByLabel("Max delivery count").fill("3");
    await form.getByLabel("Dedup window").fill("10m");
    await form.getByLabel("Ordering").selectOption("group_fifo");
    await form.getByLabel("DLQ max count").fill("500");
    await shot(page, "new-queue");
    await form.getByRole("button", { name: "Create queue" }).click();
    await page.getByRole("heading", { name: "orders" }).waitFor();
    const [q] = (await s.broker.listQueues()).filter((x) => x.name === "orders");
    assert.deepEqual(
      [q?.lockDurationMs, q?.maxDeliveryCount, q?.dedupWindowMs, q?.orderingMode, q?.dlqMaxCount],
      [45_000, 3, 600_000, "group_fifo", 500],
    );
  });

  it("sends a message with every field and sees it among the active messages", async () => {
    const form = page.getByRole("form", { name: "Send a message to orders" });
    await form.getByLabel("Body").fill('{"order": 42, "items": ["book"]}');
    await form.getByLabel("Subject").fill("orders.eu.created");
    await form.getByLabel("Content type").fill("application/json");
    await form.getByLabel("Message id").fill("order-42");
    await form.getByLabel("Group id").fill("customer-7");
    await form.getByLabel("Correlation id").fill("corr-1");
    await form.getByLabel("Reply to").fill("replies");
    await form.getByLabel("Properties").fill("tier=gold\nregion=eu");
    await form.getByRole("button", { name: "Send", exact: true }).click();
    await page
      .getByRole("status")
      .getByText(/Sent: seq \d+/)
      .waitFor();
    await page.locator('table.messages[data-state="active"] tbody tr').first().waitFor();
    await page.waitForFunction(() => document.querySelector('[data-count="active"]')?.textContent === "1");
    const row = page.locator('table.messages[data-state="active"] tbody tr').first();
    assert.match(await text(row), /order-42[\s\S]*orders\.eu\.created/);
  });

  it("peeks a message in the viewer: headers, properties, body as JSON, text and hex", async () => {
    await page
      .getByRole("button", { name: /^View message \d+$/ })
      .first()
      .click();
    const viewer = page.getByRole("dialog");
    await viewer.getByText("customer-7").waitFor();
    const shown = await text(viewer);
    for (const expected of [
      "order-42",
      "orders.eu.created",
      "application/json",
      "corr-1",
      "replies",
      "tier",
      "gold",
    ])
      assert.ok(shown.includes(expected), `viewer shows ${expected}`);
    assert.match(await text(viewer.locator("pre.code")), /"order": 42,\n {2}"items"/);
    await shot(page, "message-viewer");
    await viewer.getByRole("tab", { name: "Hex" }).click();
    assert.match(await text(viewer.locator("pre.code")), /^00000000 {2}7b 22 6f 72/);
    await viewer.getByRole("tab", { name: "Text" }).focus();
    await page.keyboard.press("ArrowLeft");
    assert.equal(await viewer.getByRole("tab", { name: "JSON" }).getAttribute("aria-selected"), "true");
    await page.keyboard.press("Escape");
    await viewer.waitFor({ state: "hidden" });
  });

  it("receives it, rejects it to the dead-letter queue with a reason, filters by reason and redrives it", async () => {
    await s.broker.send("orders", { body: "second", subject: "orders.us.created", groupId: "customer-9" });
    await page.waitForFunction(() => document.querySelector('[data-count="active"]')?.textContent === "2");
    const recv = page.getByRole("form", { name: "Receive from orders" });
    await recv.getByLabel("Max messages").fill("2");
    await recv.getByRole("button", { name: "Receive" }).click();
    const items = page.getByRole("list", { name: "Received messages" }).getByRole("listitem");
    await items.nth(1).waitFor();
    await page.getByLabel("Dead-letter reason (reject)").fill("BadInput");
    await page.getByLabel("Dead-letter description (reject)").fill("no such customer");
    await items.nth(0).getByRole("button", { name: "Reject" }).click();
    await page
      .getByRole("status")
      .getByText(/Rejected \d+/)
      .waitFor();
    await page.getByLabel("Dead-letter reason (reject)").fill("Expired");
    await items.nth(0).getByRole("button", { name: "Reject" }).click();
    await page.waitForFunction(
      () => document.querySelector('[data-count="dead_lettered"]')?.textContent === "2",
    );

    await page.getByRole("tab", { name: /Dead-lettered/ }).click();
    const rows = page.locator('table.messages[data-state="dead_lettered"] tbody tr');
    await rows.nth(1).waitFor();
    await page.getByLabel("Reason", { exact: true }).selectOption("BadInput");
    await page.waitForFunction(
      () => document.querySelectorAll('table.messages[data-state="dead_lettered"] tbody tr').length === 1,
    );
    assert.match(await text(rows.first()), /BadInput/);
    await shot(page, "dead-letters", { fullPage: true });
    await page.getByRole("button", { name: /Redrive these \(1\)/ }).click();
    await confirm(page, "Redrive");
    await page.waitForFunction(
      () => document.querySelector('[data-count="dead_lettered"]')?.textContent === "1",
    );
    const active = await s.broker.peek("orders", { state: "active" });
    assert.equal(active.length, 1);
    assert.equal(active[0]?.messageId, "order-42", "the BadInput one came back");
  });

  it("redrives into another queue and purges with the DLQ forms, each after a confirmation", async () => {
    await s.broker.createQueue("orders-retry");
    const redrive = page.getByRole("form", { name: "Redrive dead letters" });
    await redrive.getByLabel("Target queue").fill("orders-retry");
    await redrive.getByLabel("Max").fill("10");
    await redrive.getByRole("button", { name: "Redrive…" }).click();
    await page.getByRole("dialog").getByText("to orders-retry").waitFor();
    await confirm(page, "Redrive");
    await page.waitForFunction(
      () => document.querySelector('[data-count="dead_lettered"]')?.textContent === "0",
    );
    assert.equal((await s.broker.stats("orders-retry")).active, 1);

    const [m] = await s.broker.receive("orders");
    await s.broker.reject("orders", m!.seqNumber, m!.lockToken!, { reason: "Poison" });
    await page.waitForFunction(
      () => document.querySelector('[data-count="dead_lettered"]')?.textContent === "1",
    );
    await page
      .getByRole("form", { name: "Purge dead letters" })
      .getByRole("button", { name: "Purge…" })
      .click();
    await confirm(page, "Purge");
    await page.waitForFunction(
      () => document.querySelector('[data-count="dead_lettered"]')?.textContent === "0",
    );
    assert.equal((await s.broker.stats("orders")).deadLettered, 0);
  });

  it("schedules a message for later and cancels it", async () => {
    const form = page.getByRole("form", { name: "Send a message to orders" });
    await form.getByLabel("Body").fill("later");
    await form.getByLabel("Message id").fill("");
    await form.locator('input[name="schedule"]').fill("2099-01-01T09:30:00");
    await form.getByRole("button", { name: "Send", exact: true }).click();
    await page.waitForFunction(() => document.querySelector('[data-count="scheduled"]')?.textContent === "1");
    await page.getByRole("tab", { name: /Scheduled/ }).click();
    await page.getByRole("button", { name: /^Cancel message \d+$/ }).click();
    await confirm(page, "Cancel message");
    await page.waitForFunction(() => document.querySelector('[data-count="scheduled"]')?.textContent === "0");
  });

  it("creates a filtered subscription with live validation and a dry run; a topic that drops the sample is flagged", async () => {
    await s.broker.subscribe("payments", "payments-all");
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Topics" }).click();
    await page.getByRole("heading", { name: "Topics" }).waitFor();
    await page.getByRole("button", { name: "New subscription" }).click();
    const form = page.getByRole("form", { name: "New subscription" });
    await form.getByLabel("Topic").fill("orders-events");
    await form.getByLabel("Subscription name").fill("gold-eu");
    const verdict = form.getByTestId("filter-verdict");
    await form.getByLabel("Filter").fill('properties["tier"] == ');
    await verdict.filter({ hasText: "invalid expression" }).waitFor();
    await form.getByLabel("Filter").fill('properties["tier"] == "gold" && subject_parts[1] == "eu"');
    await verdict.filter({ hasText: "✓ valid · sample: ✓ would route" }).waitFor();
    await shot(page, "new-subscription");
    await form.getByRole("button", { name: "Subscribe" }).click();
    await page.getByRole("dialog").waitFor({ state: "hidden" });
    const subs = await s.broker.listSubscriptions();
    assert.equal(
      subs.find((x) => x.name === "gold-eu")?.filter,
      'properties["tier"] == "gold" && subject_parts[1] == "eu"',
    );

    const row = page.locator('table.subs[data-topic="orders-events"] tr[data-sub="gold-eu"]');
    await row.getByTestId("dry-run").filter({ hasText: "✓ would route" }).waitFor();
    await shot(page, "topics", { fullPage: true });

    // A sample from the US is filtered out; the topic's only subscription drops it.
    const sample = page.getByRole("region", { name: "Dry run" });
    await sample.getByLabel("Subject").fill("orders.us.created");
    await row.getByTestId("dry-run").filter({ hasText: "✕ filtered out" }).waitFor();
    const topic = page
      .locator(".card.topic")
      .filter({ has: page.locator('table[data-topic="orders-events"]') });
    await topic.getByText("message is dropped").waitFor();
    const payments = page
      .locator(".card.topic")
      .filter({ has: page.locator('table[data-topic="payments"]') });
    assert.equal(
      await payments.getByText("message is dropped").count(),
      0,
      "a match-all subscription takes it",
    );

    // Pausing the match-all subscription drops the sample there too.
    await page.locator('tr[data-sub="payments-all"]').getByRole("button", { name: "Pause" }).click();
    await payments.getByText("message is dropped").waitFor();
    assert.equal((await s.broker.listSubscriptions()).find((x) => x.name === "payments-all")?.paused, true);
    await page.locator('tr[data-sub="payments-all"]').getByRole("button", { name: "Resume" }).click();
    await payments.getByText("message is dropped").waitFor({ state: "detached" });
  });

  it("edits a filter (saved with Subscribe) and unsubscribes after a confirmation", async () => {
    const row = page.locator('tr[data-sub="gold-eu"]');
    await row.getByRole("button", { name: "Edit filter" }).click();
    const form = page.getByRole("form", { name: "Edit filter" });
    await form.getByLabel("Filter").fill('subject startsWith "orders."');
    await form.getByTestId("filter-verdict").filter({ hasText: "✓ would route" }).waitFor();
    await form.getByRole("button", { name: "Save filter" }).click();
    await page.getByRole("dialog").waitFor({ state: "hidden" });
    await row.getByText('subject startsWith "orders."').waitFor();
    await row.getByRole("button", { name: "Unsubscribe" }).click();
    await confirm(page, "Unsubscribe");
    await row.waitFor({ state: "detached" });
    assert.equal(
      (await s.broker.listSubscriptions()).some((x) => x.name === "gold-eu"),
      false,
    );
  });

  it("watches the throughput and backlog charts move while messages flow", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Overview" }).click();
    const sent = page.getByTestId("throughput-chart").locator('[data-series="sent"]');
    const completed = page.getByTestId("throughput-chart").locator('[data-series="completed"]');
    await page.locator(".live-dot.live").waitFor();
    const pathBefore = await page.getByTestId("backlog-chart").locator("path").getAttribute("d");
    // Bounded traffic: at most 40 rounds, stopping as soon as both rates show on the chart.
    let sawSent = false;
    let sawCompleted = false;
    for (let round = 0; round < 40 && !(sawSent && sawCompleted); round++) {
      await s.broker.send(
        "orders-retry",
        Array.from({ length: 10 }, (_, i) => ({ body: `m${round}-${i}` })),
      );
      const got = await s.broker.receive("orders-retry", { maxMessages: 5 });
      for (const m of got) await s.broker.complete("orders-retry", m.seqNumber, m.lockToken!);
      await page.waitForTimeout(250);
      sawSent ||= (await text(sent)) !== "0/s";
      sawCompleted ||= (await text(completed)) !== "0/s";
    }
    assert.ok(sawSent, "the send rate rose above 0");
    assert.ok(sawCompleted, "the complete rate rose above 0");
    await page.waitForFunction(
      (before) => document.querySelector('[data-testid="backlog-chart"] path')?.getAttribute("d") !== before,
      pathBefore,
      { timeout: WAIT },
    );
    await shot(page, "overview", { fullPage: true });
  });

  it("reads well at 390 px wide", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 1, `no horizontal page scroll (overflow ${overflow}px)`);
    await shot(page, "mobile-overview");
    await page.goto(`${s.url}/ui/#/queues/orders`);
    await page.getByRole("heading", { name: "orders" }).waitFor();
    assert.ok((await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)) <= 1);
    await shot(page, "mobile-queue");
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it("is keyboard navigable: the skip link and the main navigation take focus in order", async () => {
    await page.goto(`${s.url}/ui/#/`);
    await page.reload();
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Skip to content");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement?.textContent?.trim()), "Overview");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Queues", level: 1 }).waitFor();
    assert.equal(await page.getByRole("link", { name: "Queues" }).getAttribute("aria-current"), "page");
  });

  it("signs out: the token leaves sessionStorage and the sign-in form is back", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("button", { name: "Sign in" }).waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem("mqlite.console.session")), null);
    assert.deepEqual(b.errors, []);
  });
});
