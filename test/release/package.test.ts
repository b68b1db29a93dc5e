/**
 * The package as a user gets it, and `npm start` as a user stops it.
 *
 * `npm pack` (whose prepack builds dist/) makes the tarball; it is installed into an empty project
 * the way a user would (`npm install <tarball>`, with the checkout's better-sqlite3 addon in place
 * of a from-source compile), and its CLI, its import with its types, and
 * `mqlite serve` are tried there. Then `npm start` in this checkout is stopped with SIGTERM and with
 * a terminal's Ctrl-C, and what it acknowledged must still be in the file.
 *
 * One file, run in order: the pack rebuilds dist/, which `npm start` then runs. The install uses
 * npm's cache first (--prefer-offline) and the registry for what the cache lacks.
 */
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { tempDir } from "../support/temp.js";
import {
  banner,
  base64,
  exitsCleanly,
  freePort,
  killGroup,
  portIsFree,
  type Running,
  root,
  rpc,
  run,
  shellEnv,
  start,
  succeeded,
  text,
} from "./harness.js";

const MINUTE = 60_000;
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };

/** Uses every export the README leads with; the `@ts-expect-error` lines fail if the types were `any`. */
const CONSUMER_TS = `import { type Broker, connect, type Message, openBroker, Queue } from "mqlite";

const broker: Broker = await openBroker(":memory:");
await broker.createQueue("orders", { lockDurationMs: 30_000 });
await broker.send("orders", { body: JSON.stringify({ id: 42 }), contentType: "application/json" });
const [message]: Message[] = await broker.receive("orders", { waitMs: 10 });
if (message) await broker.complete("orders", message.seqNumber, message.lockToken!);
// @ts-expect-error a queue name is a string
await broker.createQueue(42);
// @ts-expect-error seqNumber is a number
const seq: string = message!.seqNumber;

const queue = new Queue({ dbPath: "jobs.db" }).task("add", (a: number, b: number) => a + b);
const id: string = await queue.enqueue("add", [2, 3]);
// @ts-expect-error dbPath is a path
new Queue({ dbPath: 1 });

const remote: Broker = connect("http://127.0.0.1:6754", { token: "secret" });
// @ts-expect-error the token is a string
connect("http://127.0.0.1:6754", { token: 1 });
export { id, remote, seq };
`;

/** The same imports at run time, on real files: a send/receive/complete and a job's result. */
const CONSUMER_MJS = `import { connect, openBroker, Queue } from "mqlite";

const broker = await openBroker(process.argv[2]);
await broker.createQueue("orders");
await broker.send("orders", { body: "hello" });
const [message] = await broker.receive("orders", { waitMs: 1000 });
await broker.complete("orders", message.seqNumber, message.lockToken);
const left = (await broker.peek("orders")).length;
await broker.close();

const queue = new Queue({ dbPath: process.argv[3] }).task("add", (a, b) => a + b);
const worker = queue.runWorker();
const id = await queue.enqueue("add", [2, 3]);
const sum = await queue.result(id);
await worker.stop();
await queue.close();

const remote = connect("http://127.0.0.1:1", { token: "t" });
console.log(JSON.stringify({ body: message.body.toString(), left, sum, remote: typeof remote.send }));
`;

const TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    noEmit: true,
    // The package's own declarations are checked too: a type it names must be installed with it.
    skipLibCheck: false,
  },
  files: ["consumer.ts"],
};

describe("the package from npm pack, installed into an empty project", () => {
  const tmp = tempDir("mqlite-release-");
  const project = tmp.file("consumer");
  const bin = join(project, "node_modules/.bin/mqlite");

  before(async () => {
    const packed = succeeded(
      "npm pack",
      await run("npm", ["pack", "--pack-destination", tmp.dir], { cwd: root, timeoutMs: 5 * MINUTE }),
    );
    const tarballs = readdirSync(tmp.dir).filter((f) => /^mqlite-.*\.tgz$/.test(f));
    assert.deepEqual(tarballs, [`mqlite-${pkg.version}.tgz`], packed.stdout + packed.stderr);
    // npm lists the tarball's contents, one `npm notice <size> <path>` line each.
    const files = [...(packed.stdout + packed.stderr).matchAll(/^npm notice [\d.]+k?M?B (\S+)$/gm)].map(
      (m) => m[1]!,
    );
    for (const shipped of [
      "bin/mqlite.js",
      "dist/index.js",
      "dist/index.d.ts",
      "dist/cli/main.js",
      "README.md",
    ])
      assert.ok(files.includes(shipped), `the tarball lacks ${shipped}`);
    // The console's assets carry a content hash in their names (app-<hash>.js), index.html does not.
    for (const asset of [/^index\.html$/, /^app-[\w-]+\.js$/, /^styles-[\w-]+\.css$/])
      assert.ok(
        files.some(
          (f) => f.startsWith("dist/console/dist/") && asset.test(f.slice("dist/console/dist/".length)),
        ),
        `the tarball lacks the console's ${asset}`,
      );
    const extra = files.filter((f) => /^(src|test|bench|scripts|examples)\/|\.map$|\.build-stamp$/.test(f));
    assert.deepEqual(extra, [], "the tarball ships sources, tests, benches or source maps");

    mkdirSync(project);
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({
        name: "consumer",
        private: true,
        type: "module",
      }),
    );
    // `--ignore-scripts`: better-sqlite3's install step would compile its addon from source here (no
    // prebuilt binary can be downloaded), minutes of node-gyp that test better-sqlite3, not this
    // package. The checkout's addon of the same pinned version, built for this same Node, goes in
    // its place, so what runs below is the installed package with its installed dependencies.
    const installed = succeeded(
      "npm install <tarball>",
      await run(
        "npm",
        [
          "install",
          "--prefer-offline",
          "--ignore-scripts",
          "--no-audit",
          "--no-fund",
          join(tmp.dir, tarballs[0]!),
        ],
        { cwd: project, env: shellEnv(), timeoutMs: 10 * MINUTE },
      ),
    );
    const addon = "node_modules/better-sqlite3/build/Release/better_sqlite3.node";
    const ours = JSON.parse(readFileSync(join(root, "node_modules/better-sqlite3/package.json"), "utf8"));
    const theirs = JSON.parse(
      readFileSync(join(project, "node_modules/better-sqlite3/package.json"), "utf8"),
    );
    assert.equal(theirs.version, ours.version, "the package installs the better-sqlite3 it pins");
    mkdirSync(dirname(join(project, addon)), { recursive: true });
    copyFileSync(join(root, addon), join(project, addon));
    console.log(
      `# npm pack: ${(packed.ms / 1000).toFixed(0)} s; npm install of the tarball: ${(installed.ms / 1000).toFixed(0)} s`,
    );
  });
  after(() => tmp.cleanup());

  it("mqlite --help and --version run the built CLI", async () => {
    const help = succeeded("mqlite --help", await run(bin, ["--help"], { cwd: project, timeoutMs: MINUTE }));
    assert.match(help.stdout, /^Usage: mqlite \[options\] \[command\]/);
    for (const command of ["serve", "mcp", "send", "receive", "vacuum"])
      assert.match(help.stdout, new RegExp(`^  ${command}\\b`, "m"), command);
    const version = succeeded(
      "mqlite --version",
      await run(bin, ["--version"], { cwd: project, timeoutMs: MINUTE }),
    );
    assert.equal(version.stdout.trim(), `mqlite ${pkg.version}`); // the original's form
  });

  it('import { openBroker, Queue, connect } from "mqlite" works and is typed (tsc --noEmit)', async () => {
    writeFileSync(join(project, "consumer.ts"), CONSUMER_TS);
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify(TSCONFIG));
    const tsc = join(root, "node_modules/typescript/bin/tsc");
    succeeded(
      "tsc --noEmit",
      await run(process.execPath, [tsc, "-p", "."], { cwd: project, timeoutMs: 3 * MINUTE }),
    );

    writeFileSync(join(project, "consumer.mjs"), CONSUMER_MJS);
    const ran = succeeded(
      "node consumer.mjs",
      await run(process.execPath, ["consumer.mjs", tmp.file("broker.db"), tmp.file("jobs.db")], {
        cwd: project,
        timeoutMs: MINUTE,
      }),
    );
    assert.deepEqual(JSON.parse(ran.stdout), { body: "hello", left: 0, sum: 5, remote: "function" });
  });

  it("mqlite serve answers /healthz, a send/receive round trip and the console, and stops on SIGTERM", async () => {
    const served = start(bin, ["serve"], {
      cwd: project,
      env: shellEnv({
        MQLITE_DB: tmp.file("served.db"),
        MQLITE_ADDR: "127.0.0.1:0",
        MQLITE_LOG_LEVEL: "warn",
      }),
    });
    try {
      const { url, token } = await banner(served, MINUTE);
      const health = await fetch(`${url}/healthz`);
      assert.equal(health.status, 200);
      assert.equal(await health.text(), "ok");

      await rpc(url, token, "AdminService/CreateQueue", { name: "orders" });
      const sent = await rpc<{ seq_numbers: number[] }>(url, token, "QueueService/Send", {
        queue: "orders",
        messages: [{ body: base64("hello from the package") }],
      });
      assert.equal(sent.seq_numbers.length, 1);
      const received = await rpc<{ messages: { seq_number: number; lock_token: string; body: string }[] }>(
        url,
        token,
        "QueueService/Receive",
        { queue: "orders", wait_time_ms: 1000 },
      );
      assert.equal(received.messages.length, 1);
      const [m] = received.messages;
      assert.equal(m!.seq_number, sent.seq_numbers[0]);
      assert.equal(text(m!.body), "hello from the package");
      await rpc(url, token, "QueueService/Complete", {
        queue: "orders",
        seq_number: m!.seq_number,
        lock_token: m!.lock_token,
      });

      // The built console, not the placeholder a package without its bundle would fall back to.
      const page = await (await fetch(`${url}/ui/`)).text();
      assert.match(page, /<title>mqlite<\/title>/);
      const script = page.match(/<script type="module" src="\.\/(app-[\w-]+\.js)">/);
      assert.ok(script, "index.html loads the console's hashed bundle");
      const app = await fetch(`${url}/ui/${script[1]}`);
      assert.equal(app.status, 200);
      assert.ok((await app.text()).length > 10_000, "the console's bundle is served");

      served.child.kill("SIGTERM");
      await exitsCleanly(served);
    } finally {
      killGroup(served);
    }
  });
});

interface Message {
  seq_number: number;
  body: string;
  lock_token: string;
}

/** `npm start` in this checkout, on `db` and `port`, with a fixed token. */
function npmStart(db: string, port: number): Running {
  return start("npm", ["start"], {
    cwd: root,
    env: shellEnv({ MQLITE_DB: db, MQLITE_ADDR: `127.0.0.1:${port}`, MQLITE_TOKENS: "secret" }),
  });
}

/** The environment of the server process `npm start` started on `port` (Linux: /proc). */
function serverEnvironment(port: number): Map<string, string> {
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    let cmdline: string;
    let environ: string;
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      environ = readFileSync(`/proc/${pid}/environ`, "utf8");
    } catch {
      continue; // gone meanwhile, or not ours to read
    }
    const env = new Map(
      environ.split("\0").map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
    );
    if (cmdline.includes("dist/cli/main.js") && env.get("MQLITE_ADDR") === `127.0.0.1:${port}`) return env;
  }
  throw new Error(`no server process on port ${port}`);
}

async function ready(running: Running, port: number): Promise<string> {
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 3 * MINUTE; // prestart may rebuild dist/ first
  for (;;) {
    if (running.child.exitCode !== null) throw new Error(`npm start exited early:\n${running.output()}`);
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return url;
    if (Date.now() > deadline) throw new Error(`npm start did not answer /healthz:\n${running.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Every message of a queue in `state`, through Peek's pages. */
async function peekAll(url: string, state: string): Promise<Message[]> {
  const all: Message[] = [];
  for (let from = 0; ; ) {
    const page = await rpc<{ messages: Message[] }>(url, "secret", "QueueService/Peek", {
      queue: "orders",
      state,
      from_seq: from,
      max: 1000,
    });
    all.push(...page.messages);
    if (page.messages.length < 1000) return all;
    from = page.messages[page.messages.length - 1]!.seq_number + 1;
  }
}

describe("npm start", () => {
  const tmp = tempDir("mqlite-start-");
  const db = tmp.file("mq.db");
  after(() => tmp.cleanup());

  it("stops gracefully on SIGTERM to the npm process (exit 0, port freed) and keeps what it acknowledged", async () => {
    const port = await freePort();
    const first = npmStart(db, port);
    /** Sent and acknowledged (200 with a sequence number): body by sequence number. */
    const acknowledged = new Map<number, string>();
    const completed = new Set<number>();
    let unknown = 0;
    try {
      const url = await ready(first, port);
      // The server runs with glibc returning freed large buffers (docs/serving.md#memory).
      assert.equal(serverEnvironment(port).get("MALLOC_MMAP_THRESHOLD_"), "131072");
      await rpc(url, "secret", "AdminService/CreateQueue", { name: "orders" });
      for (let i = 0; i < 10; i++) {
        const body = `settled-${i}`;
        const { seq_numbers } = await rpc<{ seq_numbers: number[] }>(url, "secret", "QueueService/Send", {
          queue: "orders",
          messages: [{ body: base64(body) }],
        });
        acknowledged.set(seq_numbers[0]!, body);
      }
      const { messages } = await rpc<{ messages: Message[] }>(url, "secret", "QueueService/Receive", {
        queue: "orders",
        max_messages: 10,
      });
      assert.equal(messages.length, 10);
      for (const m of messages) {
        await rpc(url, "secret", "QueueService/Complete", {
          queue: "orders",
          seq_number: m.seq_number,
          lock_token: m.lock_token,
        });
        completed.add(m.seq_number);
      }

      // Four producers send one message at a time and keep going until the broker refuses them.
      let refusals = 0;
      const producer = async (p: number) => {
        for (let i = 0; ; i++) {
          const body = `p${p}-${i}`;
          try {
            const { seq_numbers } = await rpc<{ seq_numbers: number[] }>(url, "secret", "QueueService/Send", {
              queue: "orders",
              messages: [{ body: base64(body) }],
            });
            acknowledged.set(seq_numbers[0]!, body);
          } catch {
            refusals++;
            return; // stopping: refused (503) or the connection is gone; not acknowledged either way
          }
        }
      };
      const producers = [0, 1, 2, 3].map(producer);
      while (acknowledged.size < 110) await new Promise((r) => setTimeout(r, 5));
      first.child.kill("SIGTERM"); // the npm process, as a service manager would
      await exitsCleanly(first);
      await Promise.all(producers);
      assert.equal(refusals, 4);
      unknown = refusals;
      assert.match(first.output(), /"msg":"stopping"/);
      assert.match(first.output(), /"msg":"stopped"/);
      assert.equal(await portIsFree(port), true, "the port is still held: the broker outlived npm");
    } finally {
      killGroup(first);
    }

    const second = npmStart(db, port);
    try {
      const url = await ready(second, port);
      const active = await peekAll(url, "active");
      const found = new Map(active.map((m) => [m.seq_number, text(m.body)]));
      for (const [seq, body] of acknowledged) {
        if (completed.has(seq)) assert.equal(found.has(seq), false, `completed message ${seq} came back`);
        else assert.equal(found.get(seq), body, `acknowledged message ${seq} lost`);
      }
      // Only a producer's last send, cut by the stop, has an unknown outcome: nothing else may appear.
      assert.ok(active.length - (acknowledged.size - completed.size) <= unknown, `${active.length} active`);

      // A terminal's Ctrl-C: SIGINT to the whole foreground group, npm forwards its own copy too.
      // npm exits 0 once its script has, unless its own copy reaches it after the broker has
      // exited (a busy machine): npm has dropped its handler by then and that SIGINT ends it, as
      // Ctrl-C ends any program. The broker's own stop is what is checked: logged, once, port freed.
      process.kill(-second.child.pid!, "SIGINT");
      await exitsCleanly(second, "SIGINT");
      assert.match(second.output(), /"msg":"stopped"/);
      assert.doesNotMatch(second.output(), /second signal/);
      assert.equal(await portIsFree(port), true);
    } finally {
      killGroup(second);
    }
  });
});
