import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { silentLogger } from "../../src/contract/logger.js";
import { openBroker } from "../../src/open.js";
import type { RunningServer } from "../../src/server/index.js";
import { type PeriodicEntry, startServer } from "../../src/server/index.js";
import type { SqliteBroker } from "../../src/store/sqlite/sqlite-broker.js";

// The console's periodic-jobs routes over a real loopback server: the listing with next runs,
// pause and resume, their errors, and a server that has no periodic jobs to show.

const TOKEN = "periodic-token";
/** The server's log lines (the audit lines among them). */
const logged: { level: string; msg?: string; obj: Record<string, unknown> }[] = [];
const at = (level: string) => (obj: object, msg?: string) =>
  void logged.push({ level, msg, obj: obj as Record<string, unknown> });
const logger = { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
const WATCHER = "watcher:watch-token=monitor";

describe("server: /ui-api/periodic", () => {
  let broker: SqliteBroker;
  let server: RunningServer;
  let bare: RunningServer;
  const entries = new Map<string, PeriodicEntry>([
    ["hourly", { name: "hourly", taskName: "report", cron: "0 * * * *", queue: "default", enabled: true }],
    [
      "berlin",
      {
        name: "berlin",
        taskName: "mail",
        cron: "30 8 * * 1",
        queue: "mail",
        timezone: "Europe/Berlin",
        enabled: true,
      },
    ],
    ["pulse", { name: "pulse", taskName: "ping", everyMs: 90_000, queue: "default", enabled: true }],
  ]);
  const setEnabled = (name: string, enabled: boolean) => {
    const e = entries.get(name);
    if (!e) return false;
    e.enabled = enabled;
    return true;
  };
  const call = (srv: RunningServer, path: string, init: RequestInit = {}) =>
    fetch(`${srv.url}${path}`, {
      ...init,
      headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" },
    });

  before(async () => {
    broker = await openBroker(":memory:", { logger: silentLogger });
    const common = { broker, port: 0, tokens: [TOKEN, WATCHER], logger: silentLogger, closeBroker: false };
    server = await startServer({
      ...common,
      logger,
      periodic: {
        list: () => [...entries.values()].map((e) => ({ ...e })),
        pause: (name) => setEnabled(name, false),
        resume: (name) => setEnabled(name, true),
      },
    });
    bare = await startServer(common);
  });
  after(async () => {
    await server?.close();
    await bare?.close();
    await broker?.close();
  });

  it("lists each periodic job with its next three runs, in its time zone", async () => {
    const before = Date.now();
    const res = await call(server, "/ui-api/periodic");
    assert.equal(res.status, 200);
    const body = (await res.json()) as {
      available: boolean;
      periodic: { name: string; task: string; timezone?: string; next_runs_ms: number[] }[];
    };
    assert.equal(body.available, true);
    const hourly = body.periodic.find((p) => p.name === "hourly")!;
    assert.equal(hourly.task, "report");
    assert.equal(hourly.next_runs_ms.length, 3);
    assert.ok(hourly.next_runs_ms[0]! > before && hourly.next_runs_ms[0]! - before <= 3_600_000);
    for (const t of hourly.next_runs_ms) assert.equal(new Date(t).getUTCMinutes(), 0);
    assert.equal(hourly.next_runs_ms[1]! - hourly.next_runs_ms[0]!, 3_600_000);
    const berlin = body.periodic.find((p) => p.name === "berlin")!;
    assert.equal(berlin.timezone, "Europe/Berlin");
    const hour = new Intl.DateTimeFormat("en-GB", {
      timeZone: "Europe/Berlin",
      hour: "2-digit",
      minute: "2-digit",
    });
    assert.equal(hour.format(berlin.next_runs_ms[0]!), "08:30");
  });

  it("lists an interval job with its interval and its next three ticks (multiples of everyMs)", async () => {
    const before = Date.now();
    const body = (await (await call(server, "/ui-api/periodic")).json()) as {
      periodic: { name: string; cron?: string; every_ms?: number; next_runs_ms: number[] }[];
    };
    const pulse = body.periodic.find((p) => p.name === "pulse")!;
    assert.equal(pulse.every_ms, 90_000);
    assert.equal(pulse.cron, undefined, "an interval job has no cron");
    assert.equal(pulse.next_runs_ms.length, 3);
    const [first, second, third] = pulse.next_runs_ms as [number, number, number];
    assert.ok(first > before && first - before <= 90_000, "the first tick is within one interval");
    assert.equal(first % 90_000, 0, "ticks are multiples of everyMs since the epoch");
    assert.deepEqual([second - first, third - second], [90_000, 90_000]);
    assert.equal(body.periodic.find((p) => p.name === "hourly")?.every_ms, undefined);
  });

  it("pauses and resumes by name; a paused job lists no next run", async () => {
    assert.equal(
      (await call(server, "/ui-api/periodic/pause", { method: "POST", body: '{"name":"hourly"}' })).status,
      200,
    );
    assert.equal(entries.get("hourly")?.enabled, false);
    const listed = (await (await call(server, "/ui-api/periodic")).json()) as {
      periodic: { name: string; enabled: boolean; next_runs_ms: number[] }[];
    };
    const hourly = listed.periodic.find((p) => p.name === "hourly")!;
    assert.deepEqual([hourly.enabled, hourly.next_runs_ms], [false, []]);
    assert.equal(
      (await call(server, "/ui-api/periodic/resume", { method: "POST", body: '{"name":"hourly"}' })).status,
      200,
    );
    assert.equal(entries.get("hourly")?.enabled, true);
    const audit = logged
      .filter((l) => l.msg === "audit")
      .map((l) => [l.level, l.obj.audit, l.obj.target, l.obj.result]);
    assert.deepEqual(audit.slice(-2), [
      ["info", "pausePeriodic", { periodic: "hourly" }, "ok"],
      ["info", "resumePeriodic", { periodic: "hourly" }, "ok"],
    ]);
  });

  it("answers not_found for an unknown name and invalid_argument without one", async () => {
    const missing = await call(server, "/ui-api/periodic/pause", { method: "POST", body: '{"name":"nope"}' });
    assert.equal(missing.status, 404);
    assert.equal(((await missing.json()) as { code: string }).code, "not_found");
    for (const body of ["{}", "not json", '{"name": 7}']) {
      const bad = await call(server, "/ui-api/periodic/resume", { method: "POST", body });
      assert.equal(bad.status, 400, body);
      assert.equal(((await bad.json()) as { code: string }).code, "invalid_argument");
    }
  });

  it("needs the token like every route", async () => {
    const res = await fetch(`${server.url}/ui-api/periodic`);
    assert.equal(res.status, 401);
  });

  it("a monitor token lists periodic jobs but may not pause them", async () => {
    const auth = { Authorization: "Bearer watch-token", "Content-Type": "application/json" };
    assert.equal((await fetch(`${server.url}/ui-api/periodic`, { headers: auth })).status, 200);
    const refused = await fetch(`${server.url}/ui-api/periodic/pause`, {
      method: "POST",
      headers: auth,
      body: '{"name":"hourly"}',
    });
    assert.equal(refused.status, 403);
    const body = (await refused.json()) as { code: string; message: string };
    assert.equal(body.code, "permission_denied");
    assert.match(body.message, /manage/);
    assert.equal(entries.get("hourly")?.enabled, true, "not paused");
  });

  it("says when the server has no periodic jobs to show (not served by queue.dashboard())", async () => {
    const body = (await (await call(bare, "/ui-api/periodic")).json()) as {
      available: boolean;
      periodic: unknown[];
    };
    assert.deepEqual(body, { available: false, periodic: [] });
    assert.equal(
      (await call(bare, "/ui-api/periodic/pause", { method: "POST", body: '{"name":"hourly"}' })).status,
      404,
    );
  });
});
