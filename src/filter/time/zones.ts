/**
 * Time zones (Go *time.Location) backed by Intl's IANA database.
 */
import { FilterRuntimeError } from "../errors.js";

interface ZoneInfo {
  /** Offset east of UTC in seconds. */
  offset: number;
  /** Abbreviation such as "CEST", or a numeric form like "+09" when the zone has none. */
  abbr: string;
}

/** A time zone: UTC, Local, a fixed offset, or an IANA zone. */
export class Location {
  readonly goTypeName = "*time.Location";
  private readonly cache = new Map<number, ZoneInfo>();

  private constructor(
    /** The name returned by String(): "UTC", "Local", an IANA name, or a fixed zone's name. */
    readonly name: string,
    /** IANA zone used for lookups, or undefined for a fixed offset. */
    private readonly ianaZone: string | undefined,
    private readonly fixed: ZoneInfo | undefined,
  ) {}

  static fixedZone(name: string, offset: number): Location {
    return new Location(name, undefined, { offset, abbr: name });
  }

  static iana(displayName: string, zone: string): Location {
    return new Location(displayName, zone, undefined);
  }

  /** True for a fixed-offset zone (including UTC). */
  get isFixed(): boolean {
    return this.fixed !== undefined;
  }

  hashKey(): string {
    return `L${this.name}`;
  }

  toString(): string {
    return this.name;
  }

  /** Zone offset and abbreviation in effect at a Unix second. */
  lookup(unixSec: number): ZoneInfo {
    if (this.fixed) return this.fixed;
    const zone = this.ianaZone as string;
    // Offsets change at most a few times a year: cache by quarter hour.
    const bucket = Math.floor(unixSec / 900);
    const hit = this.cache.get(bucket);
    if (hit) return hit;
    const info = ianaLookup(zone, unixSec);
    if (this.cache.size > 4096) this.cache.clear();
    this.cache.set(bucket, info);
    return info;
  }
}

const wallFormatters = new Map<string, Intl.DateTimeFormat>();
const nameFormatters = new Map<string, Intl.DateTimeFormat[]>();

function wallFormatter(zone: string): Intl.DateTimeFormat {
  let f = wallFormatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      era: "short",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    wallFormatters.set(zone, f);
  }
  return f;
}

// Intl accepts dates within ±8.64e15 ms; clamp lookups into that range.
const MAX_MS = 8.64e15;

function ianaLookup(zone: string, unixSec: number): ZoneInfo {
  const ms = Math.max(-MAX_MS, Math.min(MAX_MS, unixSec * 1000));
  const flooredMs = Math.floor(ms / 1000) * 1000;
  const parts = wallFormatter(zone).formatToParts(new Date(flooredMs));
  let year = 0;
  let month = 1;
  let day = 1;
  let hour = 0;
  let minute = 0;
  let second = 0;
  let bc = false;
  for (const p of parts) {
    switch (p.type) {
      case "year":
        year = Number(p.value);
        break;
      case "month":
        month = Number(p.value);
        break;
      case "day":
        day = Number(p.value);
        break;
      case "hour":
        hour = Number(p.value);
        break;
      case "minute":
        minute = Number(p.value);
        break;
      case "second":
        second = Number(p.value);
        break;
      case "era":
        bc = p.value.startsWith("B");
        break;
    }
  }
  if (bc) year = 1 - year;
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  const offset = Math.round((d.getTime() - flooredMs) / 1000);
  return { offset, abbr: zoneAbbreviation(zone, flooredMs, offset) };
}

/** tzdata abbreviations that Intl only spells as "GMT+n" (zones without daylight saving time). */
const FIXED_ABBREVIATIONS: Readonly<Record<string, string>> = {
  "Asia/Tokyo": "JST",
  "Asia/Seoul": "KST",
  "Asia/Shanghai": "CST",
  "Asia/Taipei": "CST",
  "Asia/Hong_Kong": "HKT",
  "Asia/Karachi": "PKT",
  "Asia/Jakarta": "WIB",
  "Asia/Manila": "PST",
  "Europe/Moscow": "MSK",
};

function zoneAbbreviation(zone: string, ms: number, offset: number): string {
  const fixed = FIXED_ABBREVIATIONS[zone];
  if (fixed) return fixed;
  let fs = nameFormatters.get(zone);
  if (!fs) {
    fs = ["en-US", "en-GB", "en-AU", "en-IN", "en-ZA"].map(
      (loc) => new Intl.DateTimeFormat(loc, { timeZone: zone, timeZoneName: "short" }),
    );
    nameFormatters.set(zone, fs);
  }
  for (const f of fs) {
    const name = f.formatToParts(new Date(ms)).find((p) => p.type === "timeZoneName")?.value ?? "";
    // Skip "GMT+n" forms, and Intl's invented names (e.g. "GST") that tzdata dropped.
    if (name && !name.startsWith("GMT") && !name.startsWith("UTC") && name !== "GST") return name;
  }
  if (offset === 0 && (zone === "UTC" || zone === "Etc/UTC")) return "UTC";
  if (offset === 0) return "GMT";
  // Go's tzdata uses numeric abbreviations such as "+09" or "-0330" for zones without a name.
  const sign = offset < 0 ? "-" : "+";
  const abs = Math.abs(offset);
  const h = Math.floor(abs / 3600);
  const m = Math.floor((abs % 3600) / 60);
  return `${sign}${String(h).padStart(2, "0")}${m ? String(m).padStart(2, "0") : ""}`;
}

/** The UTC location. */
export const UTC: Location = Location.fixedZone("UTC", 0);

function systemZone(): string {
  const tz = process.env.TZ;
  if (tz === "" || tz === "UTC" || tz === "UTC0") return "UTC";
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  } catch {
    return "UTC";
  }
}

let local: Location | undefined;

/**
 * The process's local zone, named "Local" as in Go. Looked up on first use: asking `Intl` for it
 * loads its time zone data, 20-30 ms that a process whose filters never use local time (most) and
 * every CLI command would pay at start.
 */
export function localZone(): Location {
  local ??= Location.iana("Local", systemZone());
  return local;
}

const loaded = new Map<string, Location>();

/** Go time.LoadLocation: "" and "UTC" give UTC, "Local" the local zone, otherwise an IANA name. */
export function loadLocation(name: string): Location {
  if (name === "" || name === "UTC") return UTC;
  if (name === "Local") return localZone();
  const hit = loaded.get(name);
  if (hit) return hit;
  let valid = false;
  // Reject what Go rejects: absolute paths, "..", and names Intl does not know.
  if (!name.includes("..") && !name.startsWith("/") && !name.includes("\\")) {
    try {
      new Intl.DateTimeFormat("en-US", { timeZone: name });
      valid = true;
    } catch {
      valid = false;
    }
  }
  if (!valid) throw new FilterRuntimeError(`unknown time zone ${name}`);
  const loc = Location.iana(name, name);
  if (loaded.size < 1024) loaded.set(name, loc);
  return loc;
}
