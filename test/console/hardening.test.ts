import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Browser, type ConsoleServer, launch, serveConsole, signIn } from "./harness.js";

/** CSP violations the page reports, gathered by a listener installed before any page script runs. */
declare global {
  interface Window {
    __violations?: string[];
    __inline?: number;
  }
}

describe("the console under its Content-Security-Policy (Chromium)", () => {
  let s: ConsoleServer;
  let b: Browser;
  before(async () => {
    s = await serveConsole({ tokens: ["admin:adm-secret", "scraper:mon-secret=monitor"] });
    await s.broker.createQueue("orders");
    await s.broker.send("orders", [{ body: Buffer.from('{"n":1}') }]);
    b = await launch();
    await b.context.addInitScript(() => {
      window.__violations = [];
      document.addEventListener("securitypolicyviolation", (e) =>
        window.__violations!.push(`${e.violatedDirective} ${e.blockedURI}`),
      );
    });
  });
  after(async () => {
    await b.close();
    await s.close();
  });

  it("loads, signs in and shows the pages with no violation", async () => {
    const { page } = b;
    const response = await page.goto(`${s.url}/ui/`);
    assert.match(response?.headers()["content-security-policy"] ?? "", /script-src 'self'/);
    await signIn(page, s.url, "adm-secret");
    await page.getByRole("link", { name: "Queues" }).first().click();
    await page.getByText("orders").first().waitFor();
    assert.deepEqual(await page.evaluate(() => window.__violations), []);
    assert.deepEqual(b.errors, []);
  });

  it("refuses an inline script injected into the page", async () => {
    const { page } = b;
    const ran = await page.evaluate(async () => {
      const script = document.createElement("script");
      script.textContent = "window.__inline = 1";
      document.head.append(script);
      await new Promise((resolve) => setTimeout(resolve, 50));
      return window.__inline;
    });
    assert.equal(ran, undefined);
    const violations = await page.evaluate(() => window.__violations ?? []);
    assert.ok(
      violations.some((v) => v.startsWith("script-src")),
      JSON.stringify(violations),
    );
    b.errors.length = 0; // Chromium logs the refusal as a console error: that one is expected
  });

  it("cannot be framed by another page", async () => {
    const { page } = b;
    await page.goto("about:blank");
    await page.setContent(`<iframe id="f" src="${s.url}/ui/"></iframe>`);
    const frame = await (await page.$("#f"))!.contentFrame();
    await frame!.waitForLoadState();
    // Chromium replaces a refused frame with its error page.
    assert.match(frame!.url(), /^chrome-error:/);
    b.errors.length = 0; // the refusal is logged as a console error: expected here
  });

  it("a monitor token signs in and sees the overview", async () => {
    const { page } = b;
    await page.goto(`${s.url}/ui/`);
    await page.evaluate(() => sessionStorage.clear());
    await signIn(page, s.url, "mon-secret");
    await page.getByRole("heading", { name: "Overview" }).waitFor();
    await page.waitForTimeout(2500);
    assert.deepEqual(await page.evaluate(() => window.__violations), []);
    assert.deepEqual(b.errors, []);
  });
});
