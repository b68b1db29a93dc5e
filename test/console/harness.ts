import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium, type Locator, type Page } from "playwright-core";
import { buildConsole, CONSOLE_DIST, consoleIsStale } from "../../src/console/build.js";
import { silentLogger } from "../../src/contract/logger.js";
import { type RunningServer, type ServerOptions, startServer } from "../../src/server/index.js";
import { SqliteBroker } from "../../src/store/sqlite/sqlite-broker.js";

export const CHROMIUM = "/usr/bin/chromium";
export const ARTIFACTS = join("test-artifacts", "console");
export const DOCS_IMAGES = join("docs", "images");
/** Set to 1 to refresh the README's screenshots (docs/images) from this run's artifacts. */
export const UPDATE_DOCS = process.env.MQLITE_UPDATE_SCREENSHOTS === "1";
/** The screenshots the README and docs/console.md show. */
const README_SHOTS = new Set([
  "overview",
  "dead-letters",
  "message-viewer",
  "topics",
  "topology",
  "jobs",
  "job-detail",
  "mobile-overview",
  "mobile-messages",
  "mobile-jobs",
  "search",
  "message-actions",
  "periodic",
  "workers",
  "outage",
  "read-only",
]);

/** How long a condition may take in the browser (generous: the machine is shared). */
export const WAIT = 30_000;

let building: Promise<unknown> | undefined;

/** Builds the console once per process when its sources are newer than dist. */
export function ensureBuilt(): Promise<unknown> {
  building ??= consoleIsStale() ? buildConsole() : Promise.resolve();
  return building;
}

/** A served broker over a fresh database file, with the console on. */
export interface ConsoleServer {
  url: string;
  broker: SqliteBroker;
  server: RunningServer;
  dir: string;
  close(): Promise<void>;
}

export async function serveConsole(options: Partial<ServerOptions> = {}): Promise<ConsoleServer> {
  await ensureBuilt();
  const dir = mkdtempSync(join(tmpdir(), "mqlite-console-"));
  const broker = new SqliteBroker(join(dir, "console.db"), { logger: silentLogger });
  const server = await startServer({
    broker,
    port: 0,
    logger: silentLogger,
    ui: { dir: CONSOLE_DIST },
    ...options,
  });
  return {
    url: server.url,
    broker,
    server,
    dir,
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** One headless Chromium (a fresh profile) and one page, reused by every test of a file. */
export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Browser console errors and failed page loads, to assert none happened. */
  errors: string[];
  close(): Promise<void>;
}

export async function launch(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), "mqlite-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: { width: 1280, height: 900 },
    timeout: 60_000,
  });
  context.setDefaultTimeout(WAIT);
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  page.on("pageerror", (err) => errors.push(`pageerror: ${err.message}`));
  page.on("console", (msg) => {
    if (msg.type() === "error" && !/status of 40[149]/.test(msg.text()))
      errors.push(`console: ${msg.text()}`);
  });
  return {
    context,
    page,
    errors,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Saves a screenshot under test-artifacts/console (and, when asked, as a README image). */
export async function shot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  // Toasts come and go: keep them out of the pictures; a full-page picture has the sticky header
  // once, at the top.
  const style = `.toasts { visibility: hidden !important; }${options.fullPage ? " .topbar { position: static !important; }" : ""}`;
  await page.addStyleTag({ content: style });
  await page.screenshot({ path, fullPage: options.fullPage ?? false, animations: "disabled" });
  await page.evaluate(() => {
    for (const s of document.querySelectorAll("style"))
      if (s.textContent?.startsWith(".toasts { visibility")) s.remove();
  });
  if (UPDATE_DOCS && README_SHOTS.has(name)) {
    mkdirSync(DOCS_IMAGES, { recursive: true });
    copyFileSync(path, join(DOCS_IMAGES, `console-${name}.png`));
  }
  return path;
}

/** Signs in through the form (URL defaults to the page's origin). */
export async function signIn(page: Page, pageUrl: string, token: string, brokerUrl?: string): Promise<void> {
  await page.goto(`${pageUrl}/ui/`);
  if (brokerUrl) await page.getByLabel("Broker URL").fill(brokerUrl);
  await page.getByLabel("Token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("navigation", { name: "Main" }).waitFor();
}

/** A locator's text (its DOM textContent). */
export async function text(locator: Locator): Promise<string> {
  return (await locator.textContent()) ?? "";
}
