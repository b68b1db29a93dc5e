import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Page, Request } from "playwright-core";
import { CONSOLE_DIST } from "../../src/console/build.js";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { type Browser, type ConsoleServer, launch, serveConsole, shot, signIn, text } from "./harness.js";

// The console's operator views against a served broker with auth on, in one headless Chromium
// page: paging under live traffic, the address as the view's source, durations, dead letters,
// search, one message's actions, an outage and its recovery, toasts, phones and read-only tokens.

const TOKEN = "console-ops-token";
/** A token that may watch and read messages but change nothing (no `manage`). */
const VIEWER = "view-token";
const TOKENS = [TOKEN, `viewer:${VIEWER}=monitor+listen:*`];
const DAY = 86_400_000;
const HOUR = 3_600_000;
const MINUTE = 60_000;

/** Clicks the confirmation dialog's button (it may open over the message viewer). */
async function confirm(page: Page, name: string): Promise<void> {
  const dialog = page.locator("dialog[open]").filter({ has: page.locator(".confirm-text") });
  await dialog.getByRole("button", { name, exact: true }).click();
  await page.locator(".confirm-text").waitFor({ state: "detached" });
}

const rows = (page: Page, state: string) => page.locator(`table.messages[data-state="${state}"] tbody tr`);

describe("console: operating a broker (headless Chromium)", () => {
  let s: ConsoleServer;
  let b: Browser;
  let page: Page;
  let server: RunningServer;

  before(async () => {
    s = await serveConsole({ tokens: TOKENS, closeBroker: false });
    server = s.server;
    b = await launch();
    page = b.page;
    await signIn(page, s.url, TOKEN);
    await page.locator(".live-dot.live").waitFor();
  });
  after(async () => {
    await b?.close();
    await server?.close();
    await s?.broker.close();
    if (s) rmSync(s.dir, { recursive: true, force: true });
  });

  it("shows durations rounded as a whole, with plural days and unbreakable spaces (never 6 d 24 h)", async () => {
    // Messages enqueued by a process whose clock is behind: their age is known exactly.
    for (const [queue, age] of [
      ["aged-week", 6 * DAY + 23 * HOUR + 40 * MINUTE],
      ["aged-day", DAY + 2 * HOUR],
    ] as const) {
      const past = await openBroker(join(s.dir, "console.db"), {
        logger: silentLogger,
        clock: { now: () => Date.now() - age },
      });
      await past.createQueue(queue);
      await past.send(queue, { body: "old" });
      await past.close();
    }
    await page.goto(`${s.url}/ui/#/queues`);
    const oldest = (queue: string) =>
      page
        .getByRole("row")
        .filter({ has: page.getByRole("link", { name: queue, exact: true }) })
        .locator('td[data-label="Oldest"]');
    await oldest("aged-week").filter({ hasText: "7\u00a0days" }).waitFor();
    assert.equal((await text(oldest("aged-week"))).trim(), "7\u00a0days");
    assert.equal((await text(oldest("aged-day"))).trim(), "1\u00a0day 2\u00a0h");
  });

  it("keeps what “Load more” loaded under live traffic, and re-reads the list at most every 5 s", async () => {
    await s.broker.createQueue("orders");
    await s.broker.send(
      "orders",
      Array.from({ length: 120 }, (_, i) => ({ body: `order ${i}`, subject: `order.${i}` })),
    );
    await page.goto(`${s.url}/ui/#/queues/orders`);
    await rows(page, "active").nth(49).waitFor();
    assert.equal(await rows(page, "active").count(), 50);
    await page.getByRole("button", { name: "Load more" }).click();
    await rows(page, "active").nth(99).waitFor();

    const peeks: Request[] = [];
    const onRequest = (r: Request) => {
      if (r.url().endsWith(".QueueService/Peek")) peeks.push(r);
    };
    page.on("request", onRequest);
    // Live traffic: a send every 100 ms changes the active count in every snapshot.
    let sent = 0;
    const traffic = setInterval(() => {
      sent++;
      void s.broker.send("orders", { body: `live ${sent}` });
    }, 100);
    try {
      await page.waitForTimeout(7000);
    } finally {
      clearInterval(traffic);
      page.off("request", onRequest);
    }
    assert.ok(sent >= 40, `traffic flowed (${sent} sends)`);
    assert.ok(peeks.length >= 1, "the list was refreshed while the counts moved");
    assert.ok(peeks.length <= 2, `at most one re-read per 5 s (saw ${peeks.length} in 7 s)`);
    const kept = await rows(page, "active").count();
    assert.ok(kept >= 100, `the loaded 100 rows stay (${kept})`);
    // A refresh re-reads as many as were loaded, in one call.
    const body = peeks[0]?.postDataJSON() as { max: number; from_seq: number };
    assert.deepEqual([body.from_seq, body.max], [1, 100]);
  });

  it("follows query-only changes of the address: ?state= selects the tab; #/workers and unknown pages", async () => {
    await page.goto(`${s.url}/ui/#/queues/orders?state=scheduled`);
    await page.getByRole("tab", { name: /Scheduled/, selected: true }).waitFor();
    await page.evaluate(() => {
      location.hash = "#/queues/orders?state=dead_lettered";
    });
    await page.getByRole("tab", { name: /Dead-lettered/, selected: true }).waitFor();
    await page.getByRole("tab", { name: /Active/ }).click();
    await page.waitForFunction(() => location.hash === "#/queues/orders");
    await page.goBack();
    await page.getByRole("tab", { name: /Dead-lettered/, selected: true }).waitFor();

    await page.evaluate(() => {
      location.hash = "#/workers";
    });
    await page.getByRole("heading", { name: "Workers", level: 1 }).waitFor();
    await page.getByText("No worker has sent a heartbeat.").waitFor();
    await page.evaluate(() => {
      location.hash = "#/no-such-page";
    });
    await page.getByRole("heading", { name: "Not found" }).waitFor();
  });

  it("after “Redrive these”, lists the dead letters that are left without a reload", async () => {
    await s.broker.createQueue("payments");
    await s.broker.send("payments", [{ body: "a" }, { body: "b" }, { body: "c" }]);
    const got = await s.broker.receive("payments", { maxMessages: 3 });
    for (const [i, m] of got.entries())
      await s.broker.reject("payments", m.seqNumber, m.lockToken!, {
        reason: i < 2 ? "Timeout" : "BadInput",
      });
    await page.goto(`${s.url}/ui/#/queues/payments?state=dead_lettered`);
    await rows(page, "dead_lettered").nth(2).waitFor();
    await page.getByLabel("Reason", { exact: true }).selectOption("Timeout");
    await page.getByRole("button", { name: /Redrive these \(2\)/ }).click();
    await confirm(page, "Redrive");
    // The list shows the one left (BadInput) at once, with the reason filter back to every reason.
    await page.waitForFunction(
      () => document.querySelectorAll('table.messages[data-state="dead_lettered"] tbody tr').length === 1,
    );
    assert.match(await text(rows(page, "dead_lettered").first()), /BadInput/);
    assert.equal(await page.getByLabel("Reason", { exact: true }).inputValue(), "");
    assert.equal((await s.broker.stats("payments")).active, 2);
  });

  it("searches a queue's messages by body, subject and property, in bounded steps", async () => {
    await s.broker.createQueue("catalog");
    const messages = Array.from({ length: 700 }, (_, i) => ({
      body: i === 10 ? '{"sku": "needle-42"}' : `item ${i}`,
      subject: i === 20 ? "catalog.special" : "catalog.item",
      ...(i === 650 ? { properties: { color: "teal" } } : {}),
    }));
    await s.broker.send("catalog", messages.slice(0, 350));
    await s.broker.send("catalog", messages.slice(350));
    await page.goto(`${s.url}/ui/#/queues/catalog`);
    const search = page.getByRole("search", { name: "Search messages of catalog" });
    const results = page.getByTestId("search-results").locator("tbody tr");
    const summary = page.getByTestId("search-summary");

    await search.getByLabel("Find").fill("needle-42");
    await search.getByLabel("In", { exact: true }).selectOption("body");
    await search.getByRole("button", { name: "Search" }).click();
    await summary.filter({ hasText: "1 match in the first 500" }).waitFor();
    assert.equal(await results.count(), 1);

    await search.getByLabel("Find").fill("special");
    await search.getByLabel("In", { exact: true }).selectOption("subject");
    await search.getByRole("button", { name: "Search" }).click();
    await summary.filter({ hasText: "1 match in the first 500" }).waitFor();

    // The property sits past the first step: the next step finds it.
    await search.getByLabel("Find").fill("color=teal");
    await search.getByLabel("In", { exact: true }).selectOption("property");
    await search.getByRole("button", { name: "Search" }).click();
    await summary.filter({ hasText: "0 matches in the first 500" }).waitFor();
    await page.getByRole("button", { name: "Search the next 500" }).click();
    await summary.filter({ hasText: "1 match in the first 700 active messages (all of them)" }).waitFor();
    await page.getByRole("region", { name: "Search messages" }).scrollIntoViewIfNeeded();
    await shot(page, "search");
    await results
      .first()
      .getByRole("button", { name: /View message/ })
      .click();
    await page.getByRole("dialog").getByText("teal").waitFor();
    await page.getByRole("dialog").getByRole("region", { name: "Message actions" }).scrollIntoViewIfNeeded();
    await shot(page, "message-actions");
    await page.keyboard.press("Escape");
  });

  it("views, redrives, resends and deletes one message", async () => {
    await s.broker.createQueue("single");
    await s.broker.createQueue("single-copy");
    const [keep, drop] = await s.broker.send("single", [
      { body: "keep me", subject: "s.keep", properties: { tier: "gold" } },
      { body: "drop me", subject: "s.drop" },
    ]);
    const [m] = await s.broker.receive("single");
    await s.broker.reject("single", m!.seqNumber, m!.lockToken!, { reason: "Manual" });

    // Redrive one dead letter from its viewer.
    await page.goto(`${s.url}/ui/#/queues/single?state=dead_lettered`);
    await page.getByRole("button", { name: `View message ${keep}` }).click();
    const viewer = page.getByRole("dialog", { name: `Message ${keep}` });
    await viewer.getByRole("button", { name: "Redrive" }).click();
    await confirm(page, "Redrive");
    await page.getByText("No dead-lettered messages.").waitFor();
    assert.equal((await s.broker.peek("single", { state: "active" })).length, 2);

    // Resend a copy to another queue: body, subject and properties, a new message.
    await page.getByRole("tab", { name: /Active/ }).click();
    await page.getByRole("button", { name: `View message ${keep}` }).click();
    await viewer.getByLabel("Resend a copy to").fill("single-copy");
    await viewer.getByRole("button", { name: "Resend" }).click();
    await confirm(page, "Resend");
    const [copy] = await s.broker.peek("single-copy");
    assert.equal(Buffer.from(copy!.body!).toString(), "keep me");
    assert.deepEqual([copy?.subject, copy?.properties?.tier], ["s.keep", "gold"]);
    assert.equal((await s.broker.stats("single")).active, 2, "the original stays");

    // Delete one waiting message.
    await page.getByRole("button", { name: `View message ${drop}` }).click();
    await page
      .getByRole("dialog", { name: `Message ${drop}` })
      .getByRole("button", { name: "Delete" })
      .click();
    await confirm(page, "Delete message");
    await page.locator(`table.messages tr[data-seq="${drop}"]`).waitFor({ state: "detached" });
    assert.deepEqual(
      (await s.broker.getMessages([drop!])).map((x) => x.seqNumber),
      [],
      "the message is gone from the store",
    );
  });

  it("lets clicks through toasts and keeps room for them below the page's end", async () => {
    await page.goto(`${s.url}/ui/#/queues/single`);
    const form = page.getByRole("form", { name: "Send a message to single" });
    await form.getByLabel("Body").fill("toast");
    await form.getByRole("button", { name: "Send", exact: true }).click();
    // This send's own toast: an earlier test's may still be on screen, about to go.
    const toast = page.locator(".toast", { hasText: /Sent: seq/ }).last();
    await toast.waitFor();
    const box = (await toast.boundingBox())!;
    const under = await page.evaluate(
      ([x, y]) => !!document.elementFromPoint(x!, y!)?.closest(".toasts"),
      [box.x + 8, box.y + box.height / 2],
    );
    assert.equal(under, false, "a click on a toast's text reaches what is under it");
    const room = await page.evaluate(() =>
      Number.parseFloat(getComputedStyle(document.querySelector("main")!).paddingBottom),
    );
    assert.ok(room >= box.height, `the page keeps ${room}px for ${box.height}px of toasts`);
    // Its close button still takes clicks.
    await toast.getByRole("button", { name: "Dismiss" }).click();
    await toast.waitFor({ state: "detached" });
  });

  it("switches times between local and UTC, and remembers the choice", async () => {
    await page.goto(`${s.url}/ui/#/queues/single`);
    const enqueued = rows(page, "active").first().locator("td").nth(3);
    await enqueued.waitFor();
    assert.doesNotMatch(await text(enqueued), /UTC/);
    await page.getByRole("button", { name: "Local time" }).click();
    await enqueued.filter({ hasText: /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/ }).waitFor();
    await page.reload();
    await rows(page, "active").first().locator("td").nth(3).filter({ hasText: "UTC" }).waitFor();
    await page.getByRole("button", { name: "UTC" }).click();
    await enqueued.filter({ hasNotText: "UTC" }).waitFor();
  });

  it("stacks tables into labelled rows at 390 px, with no sideways scrolling", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.goto(`${s.url}/ui/#/queues/orders`);
      await rows(page, "active").first().waitFor();
      // Through a locator: the table a refresh put in place of the one waited for is the one read.
      const layout = await page.locator('table.messages[data-state="active"]').evaluate((table) => {
        const cell = table.querySelector('td[data-label="Subject"]')!;
        return {
          page: document.documentElement.scrollWidth - window.innerWidth,
          table: table.parentElement!.scrollWidth - table.parentElement!.clientWidth,
          label: getComputedStyle(cell, "::before").content,
          header: table.querySelector("thead")!.getBoundingClientRect().height,
        };
      });
      assert.ok(layout.page <= 1, `no page overflow (${layout.page}px)`);
      assert.ok(layout.table <= 1, `no table overflow (${layout.table}px)`);
      assert.equal(layout.label, '"Subject"');
      assert.ok(layout.header <= 1, "the header row is hidden (each cell names its column)");
      await page
        .getByRole("tablist", { name: "Messages by state" })
        .evaluate((e) => e.scrollIntoView({ block: "center" }));
      await shot(page, "mobile-messages");
      await page.goto(`${s.url}/ui/#/queues`);
      await page.getByRole("link", { name: "orders", exact: true }).waitFor();
      assert.ok((await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)) <= 1);
      await shot(page, "mobile-queues", { fullPage: true });
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  it("during an outage says the figures are not live; after it, an errored page recovers by itself", async () => {
    await page.goto(`${s.url}/ui/#/`);
    await page.locator(".live-dot.live").waitFor();
    const port = Number(new URL(s.url).port);
    await server.close();
    const banner = page.getByRole("alert").filter({ hasText: "Connection to the broker lost" });
    await banner.waitFor();
    assert.match(await text(banner), /not live/);
    assert.equal(await page.locator("main.stale").count(), 1);
    await page.getByTestId("connection").filter({ hasText: "Reconnecting" }).waitFor();
    await shot(page, "outage");

    // A page opened during the outage fails to load…
    await page.evaluate(() => {
      location.hash = "#/queues/orders";
    });
    await page.getByRole("alert").filter({ hasText: "cannot reach" }).waitFor();

    // …and loads by itself once the broker is back.
    server = await startServer({
      broker: s.broker,
      port,
      host: "127.0.0.1",
      tokens: TOKENS,
      logger: silentLogger,
      ui: { dir: CONSOLE_DIST },
      closeBroker: false,
    });
    await page.locator(".live-dot.live").waitFor();
    await banner.waitFor({ state: "detached" });
    await page.getByRole("heading", { name: "Config" }).waitFor();
    assert.equal(await page.locator("main.stale").count(), 0);
    await rows(page, "active").first().waitFor();
  });

  it("gives full access to a token with the manage scope", async () => {
    const res = await fetch(`${s.url}/auth/whoami`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    assert.deepEqual(((await res.json()) as { scopes: string[] }).scopes, ["manage"]);
    await page.goto(`${s.url}/ui/#/queues`);
    await page.getByRole("button", { name: "New queue" }).waitFor();
    assert.equal(await page.getByText("read-only").count(), 0);
  });

  it("is read-only for a token without the manage scope: no action that changes anything", async () => {
    try {
      await page.getByRole("button", { name: "Sign out" }).click();
      await signIn(page, s.url, VIEWER);
      await page.getByText("read-only").waitFor();
      await page.goto(`${s.url}/ui/#/queues`);
      await page.getByRole("link", { name: "orders", exact: true }).waitFor();
      assert.equal(await page.getByRole("button", { name: "New queue" }).count(), 0);
      assert.equal(await page.getByRole("button", { name: /^Delete/ }).count(), 0);

      await page.goto(`${s.url}/ui/#/queues/single`);
      await rows(page, "active").first().waitFor();
      for (const name of ["Pause", "Edit config", "Delete", "Receive"])
        assert.equal(await page.getByRole("button", { name, exact: true }).count(), 0, name);
      assert.equal(await page.getByRole("form", { name: "Send a message to single" }).count(), 0);
      await rows(page, "active")
        .first()
        .getByRole("button", { name: /View message/ })
        .click();
      const viewer = page.getByRole("dialog");
      await viewer.getByRole("region", { name: "Headers" }).waitFor();
      assert.equal(await viewer.getByRole("region", { name: "Message actions" }).count(), 0);
      await page.keyboard.press("Escape");

      await page.goto(`${s.url}/ui/#/queues/payments?state=dead_lettered`);
      await rows(page, "dead_lettered").first().waitFor();
      assert.equal(await page.getByRole("button", { name: /^Redrive/ }).count(), 0);
      assert.equal(await page.getByRole("form", { name: "Purge dead letters" }).count(), 0);
      await shot(page, "read-only", { fullPage: true });
      await page.goto(`${s.url}/ui/#/topics`);
      await page.getByRole("heading", { name: "Topics", level: 1 }).waitFor();
      assert.equal(await page.getByRole("button", { name: "New subscription" }).count(), 0);
    } finally {
      await page.getByRole("button", { name: "Sign out" }).click();
    }
    assert.deepEqual(
      b.errors.filter((e) => !/ERR_CONNECTION_REFUSED|Failed to load resource/.test(e)),
      [],
    );
  });
});
