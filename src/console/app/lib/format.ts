import { createStore } from "./store.js";

// Formatting and parsing helpers shared by the pages.

const encoder = new TextEncoder();

/** Base64 of the UTF-8 bytes of a string (the wire's `body`). */
export function utf8ToBase64(text: string): string {
  return bytesToBase64(encoder.encode(text));
}

export function bytesToBase64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

export function base64ToBytes(b64: string | null | undefined): Uint8Array {
  if (!b64) return new Uint8Array(0);
  const binary = atob(b64);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/** The bytes as UTF-8 text, or undefined when they are not valid UTF-8. */
export function bytesToText(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** The text pretty-printed as JSON, or undefined when it is not JSON. */
export function prettyJson(text: string | undefined): string | undefined {
  if (text === undefined || text.trim() === "") return undefined;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return undefined;
  }
}

/** A classic hex dump: offset, 16 bytes in hex, and their printable ASCII. */
export function hexDump(bytes: Uint8Array, max = 4096): string {
  const lines: string[] = [];
  const n = Math.min(bytes.length, max);
  for (let off = 0; off < n; off += 16) {
    const row = bytes.subarray(off, Math.min(off + 16, n));
    const hex = Array.from(row, (b) => b.toString(16).padStart(2, "0")).join(" ");
    const ascii = Array.from(row, (b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : ".")).join("");
    lines.push(`${off.toString(16).padStart(8, "0")}  ${hex.padEnd(47)}  ${ascii}`);
  }
  if (bytes.length > max) lines.push(`… ${bytes.length - max} more bytes`);
  return lines.join("\n");
}

/** A decoded body as the viewer shows it: JSON when it parses, else text, else only hex. */
export function decodeBody(b64: string | null | undefined): {
  bytes: Uint8Array;
  text?: string;
  json?: string;
} {
  const bytes = base64ToBytes(b64);
  const text = bytesToText(bytes);
  const json = prettyJson(text);
  return { bytes, ...(text !== undefined && { text }), ...(json !== undefined && { json }) };
}

/** A non-breaking space: a value never wraps between its number and its unit. */
const NB = "\u00a0";

/**
 * `45 ms`, `1.2 s`, `3 min 5 s`, `2 h 5 min`, `1 day 3 h`, `6 days 23 h`. The whole value is rounded
 * to its smallest shown unit first, so it never shows `60 s`, `60 min` or `24 h`.
 */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "—";
  const sign = ms < 0 ? "-" : "";
  const abs = Math.abs(ms);
  const unit = (n: number, u: string) => `${n}${NB}${u}`;
  if (Math.round(abs) < 1000) return `${sign}${unit(Math.round(abs), "ms")}`;
  if (abs < 9_950) return `${sign}${unit(Number((abs / 1000).toFixed(1)), "s")}`;
  const seconds = Math.round(abs / 1000);
  if (seconds < 60) return `${sign}${unit(seconds, "s")}`;
  if (seconds < 3600) {
    const m = Math.floor(seconds / 60);
    const s = seconds % 60;
    return `${sign}${unit(m, "min")}${s ? ` ${unit(s, "s")}` : ""}`;
  }
  const minutes = Math.round(abs / 60_000);
  if (minutes < 24 * 60) {
    const h = Math.floor(minutes / 60);
    const m = minutes % 60;
    return `${sign}${unit(h, "h")}${m ? ` ${unit(m, "min")}` : ""}`;
  }
  const hours = Math.round(abs / 3_600_000);
  const d = Math.floor(hours / 24);
  const h = hours % 24;
  return `${sign}${unit(d, d === 1 ? "day" : "days")}${h ? ` ${unit(h, "h")}` : ""}`;
}

/** A config duration: `0` reads as the given word. */
export function configDuration(ms: number | undefined, zero = "none"): string {
  return !ms ? zero : duration(ms);
}

/** How instants are shown: in the browser's time zone, or in UTC (the header's toggle). */
export type TimeZoneMode = "local" | "utc";

const ZONE_KEY = "mqlite.console.time";

function loadZone(): TimeZoneMode {
  try {
    return localStorage.getItem(ZONE_KEY) === "utc" ? "utc" : "local";
  } catch {
    return "local";
  }
}

export const timeZone = createStore<TimeZoneMode>(loadZone());

export function setTimeZone(mode: TimeZoneMode): void {
  try {
    localStorage.setItem(ZONE_KEY, mode);
  } catch {
    // private mode: the choice lasts for this page only
  }
  timeZone.set(mode);
}

/** An instant as date and time (`2024-03-05 10:30:00`, or `2024-03-05 09:30:00 UTC`). */
export function dateTime(ms: number | null | undefined): string {
  if (!ms) return "—";
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, "0");
  if (timeZone.get() === "utc")
    return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} UTC`;
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** A time of day (`10:30:00`, or `09:30:00 UTC`). */
export function timeOfDay(ms: number): string {
  return dateTime(ms).slice(11);
}

/** `5 s ago`, `in 3 min`. */
export function relative(ms: number | null | undefined, now = Date.now()): string {
  if (!ms) return "—";
  const d = now - ms;
  if (Math.abs(d) < 1000) return "now";
  return d > 0 ? `${duration(d)} ago` : `in ${duration(-d)}`;
}

export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return "—";
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** `1,234`. */
export function count(n: number | null | undefined): string {
  return n === null || n === undefined ? "—" : n.toLocaleString("en-US");
}

/** A rate: `12.5/s`. */
export function rate(n: number): string {
  return `${n >= 100 ? Math.round(n) : n >= 10 ? n.toFixed(1) : n.toFixed(2).replace(/\.?0+$/, "")}/s`;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Reads a duration field: blank is undefined, a bare number is milliseconds, and `30s`, `5m`,
 * `1h30m`, `2d` are what they say. Throws on anything else.
 */
export function parseDuration(input: string, field = "duration"): number | undefined {
  const text = input.trim().toLowerCase();
  if (text === "") return undefined;
  if (/^\d+$/.test(text)) return Number(text);
  const re = /(\d+(?:\.\d+)?)\s*(ms|min|s|m|h|d)/gy;
  let total = 0;
  let at = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    total += Number(m[1]) * UNITS[m[2]!]!;
    at = re.lastIndex;
    while (text[at] === " ") at++;
    re.lastIndex = at;
  }
  if (at !== text.length || at === 0)
    throw new Error(`${field}: write a number of ms, or like 30s, 5m, 1h30m`);
  return Math.round(total);
}

/** Reads a non-negative integer field: blank is undefined. */
export function parseCount(input: string, field = "number"): number | undefined {
  const text = input.trim();
  if (text === "") return undefined;
  if (!/^\d+$/.test(text)) throw new Error(`${field}: a whole number`);
  return Number(text);
}

/** `key=value` lines (blank lines ignored) as a properties map. */
export function parseProperties(input: string): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const raw of input.split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    const eq = line.indexOf("=");
    if (eq <= 0) throw new Error(`properties: "${line}" is not key=value`);
    out[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** A datetime-local input's value as epoch ms (undefined when blank). */
export function parseLocalDateTime(input: string): number | undefined {
  if (input.trim() === "") return undefined;
  const ms = new Date(input).getTime();
  if (Number.isNaN(ms)) throw new Error("schedule: not a date and time");
  return ms;
}

/** `1 queue`, `3 queues`. */
export function plural(n: number, word: string): string {
  return `${count(n)} ${word}${n === 1 ? "" : "s"}`;
}
