// Filter language benchmark: compile time, and evaluations per second of three subscription
// filters beside hand-written JavaScript computing the same predicate, measured in the same run.
import { compileMessageFilter, type FilterMessage } from "../src/filter/index.js";

const N_MESSAGES = 1024;
const decoder = new TextDecoder();
const encoder = new TextEncoder();

function jsonBody(i: number): Uint8Array {
  // About 1 KiB of JSON with `amount` somewhere in the middle.
  const doc: Record<string, unknown> = {
    id: `ord-${i}`,
    customer: { name: `Customer ${i}`, email: `c${i}@example.com`, tier: i % 3 === 0 ? "gold" : "silver" },
    items: Array.from({ length: 6 }, (_, k) => ({ sku: `SKU-${i}-${k}`, qty: (k % 4) + 1, price: 9.99 + k })),
    amount: (i * 37) % 250,
    currency: "EUR",
    notes: "x".repeat(200),
    tags: ["web", "promo", i % 2 ? "express" : "standard"],
  };
  return encoder.encode(JSON.stringify(doc));
}

const regions = ["eu", "us", "ap"];
const kinds = ["orders", "payments", "users"];
const messages: FilterMessage[] = Array.from({ length: N_MESSAGES }, (_, i) => ({
  subject: `${kinds[i % 3]}.${regions[(i >> 2) % 3]}.created`,
  properties: { tier: i % 5 === 0 ? "gold" : "silver", region: regions[i % 3] as string, source: "bench" },
  messageId: `m-${i}`,
  contentType: "application/json",
  body: jsonBody(i),
  enqueuedAt: 1_700_000_000_000 + i,
  visibleAt: 1_700_000_000_000 + i,
}));

interface Case {
  name: string;
  source: string;
  handWritten: (m: FilterMessage) => boolean;
}

const ORDERS_RE = /^orders\.(eu|us)\.[a-z]+$/;

const cases: Case[] = [
  {
    name: "subject + property",
    source: 'subject_parts[0] == "orders" && properties["tier"] == "gold"',
    handWritten: (m) => {
      const subject = m.subject ?? "";
      const parts = subject === "" ? [] : subject.split(".");
      return parts[0] === "orders" && (m.properties?.tier ?? "") === "gold";
    },
  },
  {
    name: "body_json (1 KiB)",
    source: '"amount" in body_json && body_json.amount > 100',
    handWritten: (m) => {
      const ct = m.contentType;
      if (ct && !ct.toLowerCase().includes("json")) return false;
      let doc: unknown;
      try {
        doc = JSON.parse(decoder.decode(m.body ?? new Uint8Array()));
      } catch {
        return false;
      }
      if (doc === null || typeof doc !== "object" || Array.isArray(doc)) return false;
      const o = doc as Record<string, unknown>;
      return Object.hasOwn(o, "amount") && typeof o.amount === "number" && o.amount > 100;
    },
  },
  {
    name: "matches",
    source: 'subject matches "^orders\\\\.(eu|us)\\\\.[a-z]+$"',
    handWritten: (m) => ORDERS_RE.test(m.subject ?? ""),
  },
];

/** Runs `fn` over the messages for about `ms` milliseconds; returns evaluations per second. */
function measure(fn: (m: FilterMessage) => boolean, ms: number): { perSec: number; hits: number } {
  let hits = 0;
  let n = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ms) {
    for (let i = 0; i < N_MESSAGES; i++) if (fn(messages[i] as FilterMessage)) hits++;
    n += N_MESSAGES;
    now = performance.now();
  }
  return { perSec: (n / (now - start)) * 1000, hits };
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

const durationMs = Number(process.env.BENCH_MS ?? 1000);

// Compile time.
const compileRows: string[][] = [];
for (const c of cases) {
  const iterations = 2000;
  for (let i = 0; i < 200; i++) compileMessageFilter(c.source);
  const start = performance.now();
  for (let i = 0; i < iterations; i++) compileMessageFilter(c.source);
  const us = ((performance.now() - start) / iterations) * 1000;
  compileRows.push([c.name, `${us.toFixed(1)} µs`]);
}

const rows: string[][] = [];
for (const c of cases) {
  const filter = compileMessageFilter(c.source);
  // A publish builds a new filter input per message (the decoded body is cached on it), so each
  // evaluation gets a fresh one here too.
  const viaFilter = (m: FilterMessage) => filter.matches({ ...m });
  // Same answers, or the comparison is meaningless.
  for (const m of messages) {
    if (viaFilter(m) !== c.handWritten(m))
      throw new Error(`${c.name}: filter and hand-written function disagree`);
  }
  measure(viaFilter, durationMs / 4);
  measure(c.handWritten, durationMs / 4);
  const f = measure(viaFilter, durationMs);
  const h = measure(c.handWritten, durationMs);
  rows.push([c.name, fmt(f.perSec), fmt(h.perSec), (f.perSec / h.perSec).toFixed(2)]);
}

function table(header: string[], body: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) =>
    `| ${r.map((v, i) => (i === 0 ? v.padEnd(widths[i] ?? 0) : v.padStart(widths[i] ?? 0))).join(" | ")} |`;
  console.log(line(header));
  console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
  for (const r of body) console.log(line(r));
}

// body_json: the cost per message of decoding the body for filters, beside a bare JSON.parse of the
// same bytes. A publish builds one filter input per message and every subscription's filter shares
// it, so the body is decoded once per message whatever the number of filters.
const FANOUT = 8;
const amountFilters = Array.from({ length: FANOUT }, (_, k) =>
  compileMessageFilter(`body_json.amount > ${k * 30}`),
);
const wholeFilter = compileMessageFilter("len(body_json) > 3 && body_json.amount > 100");
const firstFilter = amountFilters[0] as ReturnType<typeof compileMessageFilter>;
const bodyRows: [string, (m: FilterMessage) => boolean][] = [
  ["bare JSON.parse(TextDecoder.decode(body))", (m) => JSON.parse(decoder.decode(m.body)).amount > 0],
  ["1 filter: body_json.amount > 0", (m) => firstFilter.matches({ ...m })],
  ["1 filter using the whole body_json", (m) => wholeFilter.matches({ ...m })],
  [
    `${FANOUT} filters, one shared input`,
    (m) => {
      const input = { ...m };
      let any = false;
      for (const f of amountFilters) any = f.matches(input) || any;
      return any;
    },
  ],
  [
    `${FANOUT} filters, an input each (a decode each)`,
    (m) => {
      let any = false;
      for (const f of amountFilters) any = f.matches({ ...m }) || any;
      return any;
    },
  ],
];
const bodyFigures: string[][] = [];
let bareNs = 0;
for (const [name, fn] of bodyRows) {
  measure(fn, durationMs / 4);
  const ns = 1e9 / measure(fn, durationMs).perSec;
  if (bareNs === 0) bareNs = ns;
  bodyFigures.push([name, `${fmt(ns)} ns`, (ns / bareNs).toFixed(2)]);
}

console.log(`Filters over ${N_MESSAGES} messages, ${durationMs} ms per measurement.\n`);
table(["compile", "time per compile"], compileRows);
console.log();
table(["filter", "filter evals/s", "hand-written evals/s", "ratio"], rows);
for (const c of cases) console.log(`  ${c.name}: ${c.source}`);
console.log();
table(["body_json, per message (1 KiB JSON body)", "time per message", "× bare parse"], bodyFigures);
