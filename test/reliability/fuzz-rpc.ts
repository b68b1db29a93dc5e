// Property-based fuzzing of every RPC of the served broker. The route table (src/wire/routes.ts) is
// iterated and each request schema is read, so a new route is fuzzed without touching this file.
//
// Three kinds of request, per route:
//   - malformed bodies: random text and bytes, truncated JSON, trailing garbage, non-objects, BOMs;
//   - invalid requests: a well-shaped request with one defect (a wrongly typed field, an unknown
//     field, a fraction or exponent where an integer goes, bad base64, deep nesting);
//   - well-shaped hostile requests: every field of the right type, with hostile values (unicode
//     edge cases in names, properties and bodies, extreme integers, huge property maps, long lists).
// The oracle is the wire decoder itself: whatever it refuses must be a 400 `invalid_argument`.
// Every answer must be JSON with a documented code for its status, never a 5xx, within a deadline;
// and every refused request must leave the stored data exactly as it was (snapshot before/after).
//
// Used by fuzz-rpc.test.ts (bounded) and fuzz-rpc.soak.ts (many more runs).
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import Database from "better-sqlite3";
import fc from "fast-check";
import { errorFromCode } from "../../src/contract/errors.js";
import { silentLogger } from "../../src/contract/logger.js";
import { ManualClock } from "../../src/core/clock.js";
import { type RunningServer, startServer } from "../../src/server/index.js";
import { MAX_REQUEST_BYTES } from "../../src/server/options.js";
import { SqliteBroker } from "../../src/store/sqlite/sqlite-broker.js";
import {
  decodeRequest,
  ROUTE_NAMES,
  ROUTES,
  type RouteName,
  type RpcRoute,
  rpcPath,
} from "../../src/wire/index.js";
import { tempDir } from "../support/temp.js";

const TOKEN = "fuzz-token";
const REQUEST_DEADLINE_MS = 15_000;

// --- zod introspection ---------------------------------------------------------------------------

/** The parts of a zod 4 schema's definition this file reads. */
interface Def {
  type: string;
  innerType?: Schema;
  shape?: Record<string, Schema>;
  element?: Schema;
  keyType?: Schema;
  valueType?: Schema;
  entries?: Record<string, string>;
  checks?: unknown[];
}
interface Schema {
  _zod: { def: Def };
}
const def = (s: Schema) => s._zod.def;

function unwrap(s: Schema): Schema {
  let t = s;
  while (def(t).type === "optional" || def(t).type === "nullable") t = def(t).innerType!;
  return t;
}

/** A string field refined as standard base64 (`bytes()` of the wire primitives). */
const isBytes = (s: Schema) => def(s).type === "string" && (def(s).checks?.length ?? 0) > 0;

// --- hostile values ------------------------------------------------------------------------------

/** Names that exist in the fixture (so well-shaped requests reach real queues, topics, locks...). */
const EXISTING = ["q", "g", "dlq", "t", "s", "jt", "task-sub", "log-sub", "dt", "w1", "lock1", "jobs"];

const EDGE_CHARS = [
  "\u0000",
  "\u0001",
  "\u001f",
  "\u007f",
  "\ud800", // lone high surrogate
  "\udfff", // lone low surrogate
  "\ud83d\ude00", // emoji (a surrogate pair)
  "\ud83d", // half an emoji
  "\u202e", // right-to-left override
  "\u200f", // right-to-left mark
  "\u05d0", // Hebrew alef
  "\u0645", // Arabic meem
  "\ufeff", // BOM
  "\ufffd",
  "\uffff",
  "\u2028",
  "\u0301", // combining acute
  "\u00e9",
  "\ud835\udd4f", // mathematical X
  " ",
  "\t",
  "\n",
  '"',
  "\\",
  "'",
  "%",
  "*",
  "::",
  "/",
  ".",
  "$",
  "{",
  "}",
];

/** Strings with unicode edge cases: lone surrogates, NUL and control characters, RTL, emoji. */
const edgeString = fc
  .array(fc.oneof(fc.constantFrom(...EDGE_CHARS), fc.string({ maxLength: 3 })), { maxLength: 12 })
  .map((parts) => parts.join(""));

const hostileString = fc.oneof(
  { arbitrary: edgeString, weight: 4 },
  { arbitrary: fc.string({ unit: "binary", maxLength: 20 }), weight: 2 },
  { arbitrary: fc.string({ unit: "grapheme", maxLength: 20 }), weight: 1 },
  { arbitrary: fc.constantFrom("", " ", "x".repeat(257), "y".repeat(5000), "\u0000".repeat(3)), weight: 1 },
);

/** A name: an existing one (so requests go deep) or a hostile one. */
const nameLike = fc.oneof(
  { arbitrary: fc.constantFrom(...EXISTING), weight: 2 },
  { arbitrary: hostileString, weight: 3 },
  {
    arbitrary: fc.tuple(fc.constantFrom(...EXISTING), edgeString).map(([a, b]) => a + b),
    weight: 1,
  },
);

const extremeInt = fc.oneof(
  { arbitrary: fc.integer({ min: -3, max: 3 }), weight: 4 },
  {
    arbitrary: fc.constantFrom(
      Number.MAX_SAFE_INTEGER,
      Number.MIN_SAFE_INTEGER,
      2 ** 31,
      -(2 ** 31),
      2 ** 32,
      255,
      256,
      257,
      511,
      512,
      513,
      1000,
      1001,
      4096,
      1e9,
      315_360_000_001,
    ),
    weight: 3,
  },
  { arbitrary: fc.maxSafeInteger(), weight: 2 },
);

/** Wait fields stay short (a long-poll may wait its full time, legitimately). */
const waitInt = fc.oneof(fc.integer({ min: -5, max: 30 }), fc.constantFrom(Number.MIN_SAFE_INTEGER, -1));

/** A big property map is built once per size and shared (building them per run would dominate). */
const bigMaps = new Map<number, Record<string, string>>();
function bigMap(n: number): Record<string, string> {
  let m = bigMaps.get(n);
  if (!m) {
    m = {};
    for (let i = 0; i < n; i++) m[`k${i}\u00e9\ud83d\ude00`] = `v${i}`;
    bigMaps.set(n, m);
  }
  return m;
}

const propertyMap = fc.oneof(
  {
    arbitrary: fc.dictionary(hostileString, fc.option(hostileString, { nil: null }), { maxKeys: 6 }),
    weight: 6,
  },
  { arbitrary: fc.constantFrom(2_000, 20_000).map(bigMap), weight: 1 },
  {
    arbitrary: fc.constantFrom({ __proto__: "x", constructor: "y", toString: "z", hasOwnProperty: "" }),
    weight: 1,
  },
);

const base64Body = fc.oneof(
  { arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b).toString("base64")), weight: 6 },
  { arbitrary: edgeString.map((s) => Buffer.from(s).toString("base64")), weight: 2 },
  // Just over the default 1 MiB message cap, and exactly at it.
  {
    arbitrary: fc
      .constantFrom(1024 * 1024 + 1, 1024 * 1024)
      .map((n) => Buffer.alloc(n, 7).toString("base64")),
    weight: 1,
  },
);

/** Values of the right type for `schema`, with hostile contents. */
function wellShaped(schema: Schema, field = ""): fc.Arbitrary<unknown> {
  const d = def(schema);
  switch (d.type) {
    case "optional":
      return fc.option(wellShaped(d.innerType!, field), { nil: undefined, freq: 3 });
    case "nullable":
      return fc.oneof(
        { arbitrary: wellShaped(d.innerType!, field), weight: 6 },
        { arbitrary: fc.constant(null), weight: 1 },
      );
    case "object": {
      const shape = Object.fromEntries(Object.entries(d.shape!).map(([k, v]) => [k, wellShaped(v, k)]));
      return fc.record(shape, { requiredKeys: [] });
    }
    case "array": {
      const item = wellShaped(d.element!, field);
      return fc.oneof(
        { arbitrary: fc.array(item, { maxLength: field === "messages" ? 3 : 5 }), weight: 8 },
        // Around the batch limits (512 renewals, 256 receives).
        { arbitrary: fc.array(item, { minLength: 500, maxLength: 600 }), weight: 1 },
      );
    }
    case "record":
      return propertyMap;
    case "string":
      if (isBytes(schema)) return base64Body;
      return nameLike;
    case "number":
      return /wait/.test(field) ? waitInt : extremeInt;
    case "boolean":
      return fc.boolean();
    case "enum":
      return fc.constantFrom(...Object.values(d.entries!));
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** A value of the wrong JSON type for `schema`. */
function wrongType(schema: Schema): fc.Arbitrary<unknown> {
  const t = def(unwrap(schema)).type;
  const all: Record<string, fc.Arbitrary<unknown>> = {
    string: fc.oneof(fc.string(), fc.constantFrom("1", "true", "null", "[]")),
    number: fc.oneof(fc.integer(), fc.constantFrom(0, -1, 1e21)),
    boolean: fc.boolean(),
    array: fc.array(fc.integer(), { maxLength: 3 }),
    object: fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), { maxKeys: 2 }),
  };
  const kinds = Object.keys(all).filter((k) => {
    if (k === t) return false;
    if (t === "record" && k === "object") return false;
    return true;
  });
  return fc.constantFrom(...kinds).chain((k) => all[k]!);
}

/** Invalid base64: a wrong length, a character outside the alphabet, padding in the middle. */
const badBase64 = fc.oneof(
  fc.constantFrom(
    "a",
    "ab",
    "abc",
    "====",
    "a===",
    "ab=c",
    "ab c",
    "aGk",
    "aGk=\u0000",
    "aGk=!",
    "-_-_",
    "aGk=aGk=",
  ),
  fc
    .tuple(fc.uint8Array({ minLength: 1, maxLength: 30 }), fc.constantFrom("!", "-", "_", "\u00e9", "*", "="))
    .map(([b, c]) => {
      const s = Buffer.from(b).toString("base64");
      const at = Math.floor(s.length / 2);
      return s.slice(0, at) + c + s.slice(at + 1);
    }),
);

/** Fields of an object schema, with what one defect can do to each. */
function defects(schema: Schema): fc.Arbitrary<string> {
  const shape = def(unwrap(schema)).shape!;
  const keys = Object.keys(shape);
  const base = wellShaped(schema) as fc.Arbitrary<Record<string, unknown> | null | undefined>;
  const obj = base.map((v) => (v && typeof v === "object" ? v : {}));
  const options: fc.Arbitrary<string>[] = [];
  // An unknown field (including the prototype's names).
  options.push(
    fc
      .tuple(
        obj,
        fc.oneof(
          fc.string({ minLength: 1, maxLength: 8 }),
          fc.constantFrom("__proto__", "constructor", "Queue"),
        ),
        fc.jsonValue({ maxDepth: 1 }),
      )
      .filter(([, k]) => !keys.includes(k))
      .map(([o, k, v]) => {
        const text = JSON.stringify(o);
        const extra = `${JSON.stringify(k)}:${JSON.stringify(v) ?? "null"}`;
        return text === "{}" ? `{${extra}}` : `${text.slice(0, -1)},${extra}}`;
      }),
  );
  if (keys.length > 0) {
    // A wrongly typed field.
    options.push(
      fc
        .constantFrom(...keys)
        .chain((k) => fc.tuple(obj, fc.constant(k), wrongType(shape[k]!)))
        .map(([o, k, v]) => JSON.stringify({ ...o, [k]: v })),
    );
    // Deep nesting where a field goes (written as text: a value this deep cannot be stringified).
    options.push(
      fc
        .tuple(
          fc.constantFrom(...keys),
          fc.constantFrom(64, 1000, 10_000, 100_000),
          fc.constantFrom("[", '{"a":'),
        )
        .map(([k, depth, open]) => {
          const close = open === "[" ? "]" : "}";
          const inner = open === "[" ? "" : "1";
          return `{${JSON.stringify(k)}:${open.repeat(depth)}${inner}${close.repeat(depth)}}`;
        }),
    );
  }
  const intKeys = keys.filter((k) => def(unwrap(shape[k]!)).type === "number");
  if (intKeys.length > 0) {
    // A fraction or an exponent where an integer goes.
    options.push(
      fc
        .tuple(
          obj,
          fc.constantFrom(...intKeys),
          fc.constantFrom("1.5", "1.0", "1e3", "-0.0", "2E-1", "1e400"),
        )
        .map(([o, k, lit]) => {
          const rest = JSON.stringify({ ...o, [k]: undefined });
          const field = `${JSON.stringify(k)}:${lit}`;
          return rest === "{}" ? `{${field}}` : `${rest.slice(0, -1)},${field}}`;
        }),
    );
  }
  const byteKeys = keys.filter((k) => isBytes(unwrap(shape[k]!)));
  if (byteKeys.length > 0) {
    options.push(
      fc
        .tuple(obj, fc.constantFrom(...byteKeys), badBase64)
        .map(([o, k, v]) => JSON.stringify({ ...o, [k]: v })),
    );
  }
  // One defect inside an object nested in a list or field (a message of a Send, a gate, a worker).
  for (const k of keys) {
    const inner = unwrap(shape[k]!);
    const target = def(inner).type === "array" ? unwrap(def(inner).element!) : inner;
    if (def(target).type !== "object") continue;
    const wrap = (s: string) => (def(inner).type === "array" ? `[${s}]` : s);
    options.push(defects(target).map((s) => `{${JSON.stringify(k)}:${wrap(s)}}`));
  }
  return fc.oneof(...options);
}

/** Bodies that are not one well-formed JSON object. */
const malformed: fc.Arbitrary<string | Uint8Array> = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.uint8Array({ maxLength: 40 }),
  fc.constantFrom(
    "",
    " ",
    "\n",
    "null",
    "[]",
    "[{}]",
    '"{}"',
    "0",
    "true",
    "{",
    "}",
    '{"queue":',
    '{"queue":"q"',
    '{"queue":"q"}x',
    '{"queue":"q"} {}',
    '{"queue":"q",}',
    "{'queue':'q'}",
    '{"queue":"q\u0000"}',
    '{"queue":NaN}',
    '{"queue":Infinity}',
    '{"max_messages":-}',
    '{"a":1,"a":2}',
    "\ufeff",
    "\ufeff\ufeff{}",
    "{}\u0000",
    '{"\\ud800":1}',
    '{"queue":"\\uZZZZ"}',
  ),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? ""),
  fc.tuple(fc.jsonValue({ maxDepth: 3 }), fc.nat()).map(([v, n]) => {
    const s = JSON.stringify({ queue: "q", v }) ?? "";
    return s.slice(0, n % Math.max(1, s.length));
  }),
  fc
    .tuple(fc.jsonValue({ maxDepth: 2 }), fc.string({ minLength: 1, maxLength: 4 }))
    .map(([v, g]) => `${JSON.stringify({ v })}${g}`),
  // Invalid UTF-8: lone continuation bytes, overlong forms, encoded surrogates.
  fc.constantFrom(
    Uint8Array.from([0x7b, 0x22, 0x71, 0x22, 0x3a, 0x22, 0x80, 0x22, 0x7d]),
    Uint8Array.from([0x7b, 0x22, 0x71, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d]),
    Uint8Array.from([0x7b, 0x22, 0x71, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]),
    Uint8Array.from([0xff, 0xfe, 0x7b, 0x7d]),
  ),
);

// --- the served broker and its snapshot ----------------------------------------------------------

export interface FuzzTarget {
  url: string;
  broker: SqliteBroker;
  /** A digest of every row of every table (but those in `except`). */
  snapshot(except?: string[]): string;
  ensureFixture(): Promise<void>;
  close(): Promise<void>;
}

/** A served broker over a temp file with a fixed clock and no background loops: only requests change it. */
export async function fuzzTarget(): Promise<FuzzTarget> {
  const tmp = tempDir("mqlite-fuzz-");
  const path = tmp.file("fuzz.db");
  const clock = new ManualClock(1_750_000_000_000);
  const broker = new SqliteBroker(path, { clock, background: false, logger: silentLogger });
  const reader = new Database(path, { readonly: true });
  const tables = (
    reader.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {
      name: string;
    }[]
  ).map((t) => t.name);
  // Every column in order, not rowid: some tables are WITHOUT ROWID. The whole row sorts the same
  // rows the same way every time, which is all a digest needs.
  const dumps = tables.map((t) => {
    const columns = (reader.prepare(`SELECT count(*) AS n FROM pragma_table_info(?)`).get(t) as { n: number })
      .n;
    const order = Array.from({ length: columns }, (_, i) => i + 1).join(", ");
    return reader.prepare(`SELECT * FROM "${t}" ORDER BY ${order}`).raw();
  });
  const snapshot = (except: string[] = []) => {
    const hash = createHash("sha256");
    tables.forEach((t, i) => {
      if (except.includes(t)) return;
      hash.update(`\n#${t}\n`);
      for (const row of dumps[i]!.all() as unknown[][]) {
        for (const v of row)
          hash.update(Buffer.isBuffer(v) ? `b:${v.toString("hex")}|` : `${typeof v}:${String(v)}|`);
        hash.update("\n");
      }
    });
    return hash.digest("hex");
  };
  const server: RunningServer = await startServer({
    broker,
    port: 0,
    tokens: [TOKEN],
    logger: silentLogger,
    closeBroker: false,
    graceMs: 1000,
  });
  const ensureFixture = async () => {
    const queues = new Set((await broker.listQueues()).map((q) => q.name));
    const subs = new Set((await broker.listSubscriptions()).map((s) => `${s.topic}/${s.name}`));
    if (!queues.has("q")) await broker.createQueue("q", { lockDurationMs: 60_000 });
    if (!queues.has("g")) await broker.createQueue("g", { orderingMode: "group_fifo" });
    if (!queues.has("dlq")) await broker.createQueue("dlq");
    if (!queues.has("jobs")) await broker.createQueue("jobs");
    if (!subs.has("t/s")) await broker.subscribe("t", "s", { filter: 'subject == "x"' });
    if (!subs.has("jt/task-sub"))
      await broker.subscribeTask("jt", "task-sub", { task: "work", queue: "jobs" });
    if (!subs.has("jt/log-sub")) await broker.subscribeLog("jt", "log-sub");
    await broker.declareTopic("dt");
    if ((await broker.stats("q")).total < 3) {
      await broker.send("q", [
        { body: "one", messageId: "m1", properties: { a: "1" } },
        { body: "two", subject: "x" },
        { body: "three" },
      ]);
      await broker.receive("q", { maxMessages: 1 }); // one locked
    }
    if ((await broker.stats("dlq")).deadLettered === 0) {
      await broker.send("dlq", { body: "dead" });
      const [m] = await broker.receive("dlq");
      if (m) await broker.reject("dlq", m.seqNumber, m.lockToken!);
    }
    if ((await broker.stats("g")).total === 0) await broker.send("g", { body: "grouped", groupId: "g1" });
    await broker.heartbeat({ workerId: "w1", queues: ["jobs"], status: "active" });
    await broker.acquireLock("lock1", "w1", 60_000);
    await broker.publish("jt", { body: "[1]" });
  };
  const close = async () => {
    await server.close();
    reader.close();
    await broker.close();
    tmp.cleanup();
  };
  try {
    await ensureFixture();
  } catch (err) {
    // A setup that fails must fail the suite, not leave a server that keeps the test process alive.
    await close();
    throw err;
  }
  return { url: server.url, broker, snapshot, ensureFixture, close };
}

// --- the properties ------------------------------------------------------------------------------

export interface Answer {
  status: number;
  text: string;
  ms: number;
}

export async function post(
  url: string,
  route: RpcRoute,
  body: string | Uint8Array,
  method = "POST",
): Promise<Answer> {
  const started = performance.now();
  const res = await fetch(url + rpcPath(route), {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    ...(method !== "GET" && method !== "HEAD" && { body: body as BodyInit }),
    signal: AbortSignal.timeout(REQUEST_DEADLINE_MS),
  });
  const text = await res.text();
  return { status: res.status, text, ms: performance.now() - started };
}

/** The body as the server reads it (UTF-8, a leading BOM dropped), to ask the wire decoder. */
async function asServerReadsIt(body: string | Uint8Array): Promise<string> {
  return new Response(body as BodyInit).text();
}

/** Asserts an error answer is JSON `{code, message}` with a documented code for its status. */
export function assertDocumentedError(a: Answer, context: string): { code: string } {
  let parsed: { code?: unknown; message?: unknown };
  try {
    parsed = JSON.parse(a.text);
  } catch {
    assert.fail(`${context}: ${a.status} with a non-JSON body: ${a.text.slice(0, 200)}`);
  }
  assert.equal(typeof parsed.code, "string", `${context}: no code in ${a.text.slice(0, 200)}`);
  assert.equal(typeof parsed.message, "string", `${context}: no message in ${a.text.slice(0, 200)}`);
  const code = parsed.code as string;
  assert.notEqual(code, "internal", `${context}: internal error ${a.text.slice(0, 300)}`);
  assert.equal(
    errorFromCode(code, "").status,
    a.status,
    `${context}: code ${code} does not belong to status ${a.status}`,
  );
  return { code };
}

export interface FuzzStats {
  requests: number;
  byStatus: Record<number, number>;
  slowestMs: number;
}

export interface FuzzOptions {
  /** Runs per route and kind of request. */
  runsPerRoute: number;
  seed?: number;
}

/**
 * Fuzzes every route of the wire table. Throws (with fast-check's counterexample and seed) on the
 * first broken promise.
 */
export async function fuzzEveryRoute(target: FuzzTarget, options: FuzzOptions): Promise<FuzzStats> {
  const stats: FuzzStats = { requests: 0, byStatus: {}, slowestMs: 0 };
  let baseline = target.snapshot();
  const check = async (name: RouteName, body: string | Uint8Array, kind: string) => {
    const route = ROUTES[name] as RpcRoute;
    const context = `${kind} ${rpcPath(route)} ${JSON.stringify(typeof body === "string" ? body.slice(0, 300) : [...body])}`;
    // The oracle: what the wire decoder makes of the body.
    let refused = false;
    if (route.request) {
      try {
        decodeRequest(route.request, await asServerReadsIt(body));
      } catch {
        refused = true;
      }
    }
    const a = await post(target.url, route, body);
    stats.requests++;
    stats.byStatus[a.status] = (stats.byStatus[a.status] ?? 0) + 1;
    stats.slowestMs = Math.max(stats.slowestMs, a.ms);
    assert.ok(a.status < 500, `${context}: ${a.status} ${a.text.slice(0, 300)}`);
    if (a.status >= 400) {
      const { code } = assertDocumentedError(a, context);
      const size = typeof body === "string" ? Buffer.byteLength(body) : body.length;
      if (refused) {
        if (size > MAX_REQUEST_BYTES) assert.equal(code, "message_too_large", context);
        else
          assert.equal(
            code,
            "invalid_argument",
            `${context}: the decoder refuses it, the server said ${code}`,
          );
      }
      assert.equal(target.snapshot(), baseline, `${context}: a refused request changed the stored data`);
    } else {
      assert.ok(!refused, `${context}: the decoder refuses it, the server answered ${a.status}`);
      JSON.parse(a.text);
      baseline = target.snapshot();
    }
  };

  for (const name of ROUTE_NAMES) {
    const route = ROUTES[name] as RpcRoute;
    await target.ensureFixture();
    baseline = target.snapshot();
    const params = {
      numRuns: options.runsPerRoute,
      includeErrorInReport: true,
      endOnFailure: true,
      ...(options.seed !== undefined && { seed: options.seed }),
    };
    await fc.assert(
      fc.asyncProperty(malformed, (body) => check(name, body, "malformed")),
      params,
    );
    if (!route.request) continue;
    const schema = route.request as unknown as Schema;
    await fc.assert(
      fc.asyncProperty(defects(schema), (body) => check(name, body, "invalid")),
      params,
    );
    await fc.assert(
      fc.asyncProperty(wellShaped(schema), (value) =>
        check(name, JSON.stringify(value ?? {}), "well-shaped"),
      ),
      params,
    );
  }
  return stats;
}

/** What the server makes of a string it accepted: lone surrogates become U+FFFD (Go's decoder does the same). */
export function wellFormed(s: string): string {
  return s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");
}

async function rpc(target: FuzzTarget, name: RouteName, body: unknown): Promise<Answer & { json: any }> {
  const a = await post(target.url, ROUTES[name] as RpcRoute, JSON.stringify(body));
  assert.ok(
    a.status < 500,
    `${rpcPath(ROUTES[name] as RpcRoute)} ${JSON.stringify(body)}: ${a.status} ${a.text}`,
  );
  if (a.status >= 400) assertDocumentedError(a, `${name} ${JSON.stringify(body).slice(0, 200)}`);
  return { ...a, json: JSON.parse(a.text) };
}

/**
 * Hostile names: whatever CreateQueue accepts is one queue that every other call reaches by the
 * same name (send, receive, stats, listing, delete); whatever it refuses is a 400 that creates
 * nothing. The same for a topic and its subscription.
 */
export function fuzzNames(target: FuzzTarget, runs: number, seed?: number): Promise<number> {
  return fuzzNamesWith(target, hostileString, fc.boolean(), runs, seed);
}

export async function fuzzNamesWith(
  target: FuzzTarget,
  names: fc.Arbitrary<string>,
  viaTopics: fc.Arbitrary<boolean>,
  runs: number,
  seed?: number,
): Promise<number> {
  let accepted = 0;
  // Sequence numbers are never reused: the counter moves on.
  const except = ["sqlite_sequence"];
  const property = fc.asyncProperty(names, viaTopics, async (name, viaTopic) => {
    // Only new names: the fixture's own are reached by the other properties.
    const taken = [
      ...(await rpc(target, "listQueues", {})).json.queues.map((q: { name: string }) => q.name),
      ...(await rpc(target, "listSubscriptions", {})).json.subscriptions.flatMap(
        (s: { topic: string; name: string }) => [s.topic, s.name],
      ),
      ...(await rpc(target, "listDeclaredTopics", {})).json.topics.map((t: { name: string }) => t.name),
    ];
    fc.pre(![name, `${name}-sub`].some((n) => taken.includes(wellFormed(n))));
    const before = target.snapshot(except);
    if (!viaTopic) {
      const created = await rpc(target, "createQueue", { name });
      if (created.status >= 400) {
        assert.ok([400, 409].includes(created.status), created.text);
        assert.equal(target.snapshot(except), before, "a refused CreateQueue changed the stored data");
        return;
      }
    } else {
      const created = await rpc(target, "subscribe", { topic: name, name: `${name}-sub` });
      if (created.status >= 400) {
        assert.ok([400, 409].includes(created.status), created.text);
        assert.equal(target.snapshot(except), before, "a refused Subscribe changed the stored data");
        return;
      }
    }
    accepted++;
    const queue = viaTopic ? `${name}-sub` : name;
    const listed = (await rpc(target, "listQueues", {})).json.queues.map((q: { name: string }) => q.name);
    assert.ok(listed.includes(wellFormed(queue)), `${JSON.stringify(queue)} is not listed as itself`);
    const sent = await rpc(target, "send", {
      queue: viaTopic ? name : queue,
      messages: [{ body: "aGk=", message_id: name, subject: name, properties: { [name]: name } }],
    });
    assert.equal(sent.status, 200, `send to ${JSON.stringify(name)}: ${sent.text}`);
    const stats = await rpc(target, "stats", { queue });
    assert.equal(stats.status, 200, stats.text);
    assert.equal(stats.json.active, 1, `stats of ${JSON.stringify(queue)}: ${stats.text}`);
    const got = await rpc(target, "receive", { queue, max_messages: 10 });
    assert.equal(got.json.messages.length, 1, `receive from ${JSON.stringify(queue)}: ${got.text}`);
    const m = got.json.messages[0];
    assert.equal(m.message_id, wellFormed(name), "message_id round trip");
    assert.equal(m.subject, wellFormed(name), "subject round trip");
    assert.deepEqual(m.properties, { [wellFormed(name)]: wellFormed(name) }, "properties round trip");
    const done = await rpc(target, "complete", { queue, seq_number: m.seq_number, lock_token: m.lock_token });
    assert.equal(done.status, 200, done.text);
    const removed = viaTopic
      ? await rpc(target, "unsubscribe", { topic: name, name: queue })
      : await rpc(target, "deleteQueue", { name: queue });
    assert.equal(removed.status, 200, removed.text);
    assert.equal(
      target.snapshot(except),
      before,
      `creating and removing ${JSON.stringify(name)} left something behind`,
    );
  });
  await fc.assert(property, {
    numRuns: runs,
    includeErrorInReport: true,
    endOnFailure: true,
    ...(seed !== undefined && { seed }),
  });
  return accepted;
}
