import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Locator, Page } from "playwright-core";
import { type Browser, type ConsoleServer, launch, serveConsole, shot, signIn, text } from "./harness.js";

// The Topology page against a served broker: the live diagram drawn from the broker's own data,
// its table for screen readers, and the two explanatory diagrams.

const TOKEN = "console-topology-token";
const FILTER = 'properties["tier"] == "gold"';

const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Waits until one of a diagram's text lines reads exactly `value`. */
async function label(diagram: Locator, value: string): Promise<void> {
  await diagram
    .locator("text, tspan")
    .filter({ hasText: new RegExp(`^${literal(value)}$`) })
    .first()
    .waitFor();
}

describe("console: topology (headless Chromium)", () => {
  let s: ConsoleServer;
  let b: Browser;
  let page: Page;

  before(async () => {
    s = await serveConsole({ tokens: [TOKEN] });
    await s.broker.subscribe("orders-events", "all-orders");
    await s.broker.subscribe("orders-events", "gold-orders", { filter: FILTER });
    await s.broker.subscribeTask("signups", "welcome-mail", { task: "send_welcome", queue: "mail" });
    await s.broker.subscribeLog("signups", "analytics");
    await s.broker.createQueue("invoices");
    await s.broker.send("orders-events", [
      { body: "a", properties: { tier: "gold" } },
      { body: "b", properties: { tier: "silver" } },
    ]);
    await s.broker.send("invoices", [{ body: "1" }, { body: "2" }, { body: "3" }]);
    const [m] = await s.broker.receive("invoices");
    await s.broker.reject("invoices", m!.seqNumber, m!.lockToken!, { reason: "Broken" });
    b = await launch();
    page = b.page;
    await signIn(page, s.url, TOKEN);
  });
  after(async () => {
    await b?.close();
    await s?.close();
  });

  it("draws every topic, subscription and queue with their edge labels and counts", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Topology" }).click();
    await page.getByRole("heading", { name: "Topology", level: 1 }).waitFor();
    assert.equal(await page.getByRole("link", { name: "Topology" }).getAttribute("aria-current"), "page");
    const diagram = page.getByTestId("topology-diagram");
    await diagram.waitFor();
    assert.equal(await diagram.getAttribute("role"), "img");
    assert.match(await text(diagram.locator("title").first()), /2 topics, 4 subscriptions, 4 queues/);

    for (const node of ["orders-events", "signups", "all-orders", "gold-orders", "welcome-mail", "analytics"])
      await label(diagram, node);
    for (const queue of ["invoices", "mail"]) await label(diagram, queue);
    await label(diagram, "queue · active");
    await label(diagram, "task · active");
    await label(diagram, "log · active");
    await label(diagram, FILTER);
    await label(diagram, "match all");
    // Edges: topic → subscription says what passes, subscription → queue what lands there.
    await label(diagram, "every message");
    await label(diagram, "if filter matches");
    await label(diagram, "copies");
    await label(diagram, "jobs");
    // Backlogs: both copies in all-orders, the gold one in gold-orders, 2 + 1 dead in invoices.
    const tips = await diagram.locator("g.node title").allTextContents();
    for (const tip of [
      "Queue all-orders: 2 active, 0 dead-lettered",
      "Queue gold-orders: 1 active, 0 dead-lettered",
      "Queue invoices: 2 active, 1 dead-lettered",
      "Queue mail: 0 active, 0 dead-lettered",
    ])
      assert.ok(tips.includes(tip), `${tip} in ${tips.join(" | ")}`);
    assert.equal(await diagram.locator('g.edge path[marker-end^="url(#"]').count(), 7);
  });

  it("redraws from the live feed when a subscription is paused or messages arrive", async () => {
    const diagram = page.getByTestId("topology-diagram");
    await s.broker.pauseSubscription("orders-events", "gold-orders");
    await label(diagram, "queue · paused");
    await label(diagram, "paused: no copies");
    // Counts come from the feed itself: new messages cost the page no request.
    const rpcs: string[] = [];
    const onRequest = (r: { url(): string }) => {
      if (r.url().includes("/mqlite.v1.")) rpcs.push(r.url());
    };
    page.on("request", onRequest);
    await s.broker.send("invoices", { body: "4" });
    await label(diagram, "3 active");
    await s.broker.send("invoices", { body: "5" });
    await label(diagram, "4 active");
    await s.broker.receive("invoices", { mode: "receive-and-delete" });
    await label(diagram, "3 active");
    page.off("request", onRequest);
    assert.deepEqual(rpcs, []);
    await s.broker.resumeSubscription("orders-events", "gold-orders");
    await label(diagram, "if filter matches");
  });

  it("offers the same content as a table, and nodes link to their pages", async () => {
    await page.getByText("The topology as a table").click();
    const table = page.getByRole("region", { name: "Topology as a table" });
    const row = table.getByRole("row").filter({ hasText: "gold-orders" });
    assert.match(await text(row), /orders-events[\s\S]*gold-orders[\s\S]*queue[\s\S]*tier[\s\S]*active/);
    assert.match(await text(table.getByRole("row").filter({ hasText: "welcome-mail" })), /task[\s\S]*mail/);
    assert.match(await text(table.getByRole("row").filter({ hasText: "analytics" })), /none \(log\)/);
    assert.match(await text(table.getByRole("row").filter({ hasText: "standalone" })), /invoices\s*3\s*1/);

    await page.getByTestId("topology-diagram").locator('a[href="#/queues/invoices"]').click();
    await page.getByRole("heading", { name: "invoices" }).waitFor();
    await page.goBack();
    await page.getByTestId("topology-diagram").waitFor();
  });

  it("explains fan-out and a message's life in two labelled diagrams", async () => {
    const fanOut = page.getByRole("img", { name: "Queue versus topic fan-out" });
    for (const l of ["send", "receive", "publish", "copy", "✕ filtered out", "✕ dropped"])
      await label(fanOut, l);
    const life = page.getByRole("img", { name: /A message's life/ });
    for (const state of ["active", "locked", "scheduled", "deferred", "dead_lettered", "completed"])
      await label(life, state);
    const all = (await life.locator(".edge-label").allTextContents()).join(" | ");
    for (const verb of [
      "send",
      "schedule",
      "due",
      "receive",
      "complete",
      "abandon",
      "abandon with delay",
      "reject",
      "defer",
      "receive-deferred",
      "lock expiry",
      "max deliveries",
      "TTL expiry",
      "redrive",
    ])
      assert.ok(all.includes(verb), `the life diagram labels ${verb} (${all})`);
    await page.mouse.move(0, 0); // no hover outline in the picture
    await shot(page, "topology", { fullPage: true });
  });

  it("reads at 390 px wide: the diagrams scroll inside their frames", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 1, `no horizontal page scroll (overflow ${overflow}px)`);
    const frame = page.getByRole("region", { name: "Topology diagram" });
    assert.ok(await frame.evaluate((el) => el.scrollWidth > el.clientWidth), "the diagram scrolls");
    await shot(page, "mobile-topology");
    await page.setViewportSize({ width: 1280, height: 900 });
    assert.deepEqual(b.errors, []);
  });
});
