/**
 * Methods callable on time.Time, time.Duration, time.Month, time.Weekday and *time.Location
 * values (`t.Hour()`, `d.Seconds()`, `m.String()` ...), with their static types.
 */
import { FilterRuntimeError } from "../errors.js";
import {
  Duration,
  GoMonth,
  GoWeekday,
  intFromBig,
  mkFloat,
  toIndexInt,
  type Value,
} from "../runtime/values.js";
import {
  BOOL,
  DURATION,
  FLOAT,
  type FuncType,
  funcType,
  INT,
  LOCATION,
  MONTH,
  STRING,
  TIME,
  type Type,
  WEEKDAY,
} from "../types.js";
import { isLeap } from "./calendar.js";
import { formatDuration } from "./duration.js";
import { GoTime, subTimes, ZERO_TIME_SEC } from "./go-time.js";
import { formatTime, LAYOUTS } from "./go-time-layout.js";
import { Location, localZone, UTC } from "./zones.js";

export interface MethodSpec {
  type: FuncType;
  call: (self: Value, args: Value[]) => Value;
}

function big(v: Value): bigint {
  return BigInt(toIndexInt(v));
}

function durationArg(v: Value): bigint {
  if (v instanceof Duration) return BigInt(v.ns);
  if (typeof v === "number" || typeof v === "bigint") return BigInt(toIndexInt(v));
  throw new FilterRuntimeError(`invalid argument: expected time.Duration, got ${String(v)}`);
}

function timeArg(v: Value): GoTime {
  if (v instanceof GoTime) return v;
  throw new FilterRuntimeError("invalid argument: expected time.Time");
}

function locArg(v: Value): Location {
  if (v instanceof Location) return v;
  throw new FilterRuntimeError("invalid argument: expected *time.Location");
}

const NS_PER_SEC = 1000000000n;
const ZERO_NS = BigInt(ZERO_TIME_SEC) * NS_PER_SEC;

/** Go Time.Truncate / Time.Round, relative to the zero time. */
function roundTime(t: GoTime, d: bigint, round: boolean): GoTime {
  if (d <= 0n) return t;
  const abs = t.unixNanoBig() - ZERO_NS;
  let r = abs % d;
  if (r < 0n) r += d;
  if (!round) return t.addNanos(-r);
  if (r + r < d) return t.addNanos(-r);
  return t.addNanos(d - r);
}

function isDST(t: GoTime): boolean {
  const c = t.civil();
  const jan = GoTime.date(c.year, 1, 1, 0, 0, 0, 0, t.loc).civil().offset;
  const jul = GoTime.date(c.year, 7, 1, 0, 0, 0, 0, t.loc).civil().offset;
  return jan !== jul && c.offset === Math.max(jan, jul);
}

function isoWeekYear(t: GoTime): number {
  const c = t.civil();
  // The ISO year is the year of the Thursday of this week.
  const wd = (c.weekday + 6) % 7; // Monday = 0
  const thursdayYday = c.yday - wd + 3;
  if (thursdayYday < 1) return c.year - 1;
  const daysInYear = isLeap(c.year) ? 366 : 365;
  if (thursdayYday > daysInYear) return c.year + 1;
  return c.year;
}

const T = (params: Type[], result: Type): FuncType => funcType(params, result);

export const TIME_METHODS: ReadonlyMap<string, MethodSpec> = new Map<string, MethodSpec>([
  ["Year", { type: T([], INT), call: (t) => (t as GoTime).civil().year }],
  ["Month", { type: T([], MONTH), call: (t) => new GoMonth((t as GoTime).civil().month) }],
  ["Day", { type: T([], INT), call: (t) => (t as GoTime).civil().day }],
  ["Hour", { type: T([], INT), call: (t) => (t as GoTime).civil().hour }],
  ["Minute", { type: T([], INT), call: (t) => (t as GoTime).civil().minute }],
  ["Second", { type: T([], INT), call: (t) => (t as GoTime).civil().second }],
  ["Nanosecond", { type: T([], INT), call: (t) => (t as GoTime).nsec }],
  ["YearDay", { type: T([], INT), call: (t) => (t as GoTime).civil().yday }],
  ["Weekday", { type: T([], WEEKDAY), call: (t) => new GoWeekday((t as GoTime).civil().weekday) }],
  ["ISOWeek", { type: T([], INT), call: (t) => isoWeekYear(t as GoTime) }],
  ["Unix", { type: T([], INT), call: (t) => (t as GoTime).sec }],
  ["UnixMilli", { type: T([], INT), call: (t) => intFromBig((t as GoTime).unixNanoBig() / 1000000n) }],
  ["UnixMicro", { type: T([], INT), call: (t) => intFromBig((t as GoTime).unixNanoBig() / 1000n) }],
  ["UnixNano", { type: T([], INT), call: (t) => (t as GoTime).unixNano() }],
  ["Format", { type: T([STRING], STRING), call: (t, a) => formatTime(t as GoTime, stringArg(a[0])) }],
  ["String", { type: T([], STRING), call: (t) => formatTime(t as GoTime, LAYOUTS.String) }],
  ["Add", { type: T([DURATION], TIME), call: (t, a) => (t as GoTime).addNanos(durationArg(a[0])) }],
  [
    "Sub",
    {
      type: T([TIME], DURATION),
      call: (t, a) => new Duration(intFromBig(subTimes(t as GoTime, timeArg(a[0])))),
    },
  ],
  [
    "AddDate",
    {
      type: T([INT, INT, INT], TIME),
      call: (t, a) => {
        const g = t as GoTime;
        const c = g.civil();
        return GoTime.date(
          c.year + Number(big(a[0])),
          c.month + Number(big(a[1])),
          c.day + Number(big(a[2])),
          c.hour,
          c.minute,
          c.second,
          c.nsec,
          g.loc,
        );
      },
    },
  ],
  ["After", { type: T([TIME], BOOL), call: (t, a) => (t as GoTime).compare(timeArg(a[0])) > 0 }],
  ["Before", { type: T([TIME], BOOL), call: (t, a) => (t as GoTime).compare(timeArg(a[0])) < 0 }],
  ["Equal", { type: T([TIME], BOOL), call: (t, a) => (t as GoTime).equal(timeArg(a[0])) }],
  ["IsZero", { type: T([], BOOL), call: (t) => (t as GoTime).isZero() }],
  ["IsDST", { type: T([], BOOL), call: (t) => isDST(t as GoTime) }],
  [
    "Truncate",
    { type: T([DURATION], TIME), call: (t, a) => roundTime(t as GoTime, durationArg(a[0]), false) },
  ],
  ["Round", { type: T([DURATION], TIME), call: (t, a) => roundTime(t as GoTime, durationArg(a[0]), true) }],
  ["UTC", { type: T([], TIME), call: (t) => (t as GoTime).in(UTC) }],
  ["Local", { type: T([], TIME), call: (t) => (t as GoTime).in(localZone()) }],
  ["In", { type: T([LOCATION], TIME), call: (t, a) => (t as GoTime).in(locArg(a[0])) }],
  ["Location", { type: T([], LOCATION), call: (t) => (t as GoTime).loc }],
  ["Zone", { type: T([], STRING), call: (t) => (t as GoTime).civil().abbr }],
]);

function durNs(d: Value): bigint {
  return BigInt((d as Duration).ns);
}

function roundDuration(d: bigint, m: bigint, round: boolean): bigint {
  if (m <= 0n) return d;
  let r = d % m;
  if (!round) return d - r;
  if (d < 0n) {
    r = -r;
    if (r + r < m) return d + r;
    const d1 = d - m + r;
    return d1 < d ? d1 : -9223372036854775808n;
  }
  if (r + r < m) return d - r;
  const d1 = d + m - r;
  return d1 > d ? d1 : 9223372036854775807n;
}

function floatDiv(ns: bigint, unit: bigint): number {
  const whole = ns / unit;
  const rem = ns % unit;
  return Number(whole) + Number(rem) / Number(unit);
}

export const DURATION_METHODS: ReadonlyMap<string, MethodSpec> = new Map<string, MethodSpec>([
  ["Hours", { type: T([], FLOAT), call: (d) => mkFloat(floatDiv(durNs(d), 3600n * NS_PER_SEC)) }],
  ["Minutes", { type: T([], FLOAT), call: (d) => mkFloat(floatDiv(durNs(d), 60n * NS_PER_SEC)) }],
  ["Seconds", { type: T([], FLOAT), call: (d) => mkFloat(floatDiv(durNs(d), NS_PER_SEC)) }],
  ["Milliseconds", { type: T([], INT), call: (d) => intFromBig(durNs(d) / 1000000n) }],
  ["Microseconds", { type: T([], INT), call: (d) => intFromBig(durNs(d) / 1000n) }],
  ["Nanoseconds", { type: T([], INT), call: (d) => (d as Duration).ns }],
  ["String", { type: T([], STRING), call: (d) => formatDuration(durNs(d)) }],
  [
    "Truncate",
    {
      type: T([DURATION], DURATION),
      call: (d, a) => new Duration(intFromBig(roundDuration(durNs(d), durationArg(a[0]), false))),
    },
  ],
  [
    "Round",
    {
      type: T([DURATION], DURATION),
      call: (d, a) => new Duration(intFromBig(roundDuration(durNs(d), durationArg(a[0]), true))),
    },
  ],
  [
    "Abs",
    {
      type: T([], DURATION),
      call: (d) => {
        const n = durNs(d);
        if (n >= 0n) return d;
        return new Duration(n === -9223372036854775808n ? 9223372036854775807n : intFromBig(-n));
      },
    },
  ],
]);

const STRING_ONLY: ReadonlyMap<string, MethodSpec> = new Map([
  ["String", { type: T([], STRING), call: (v: Value) => String(v) }],
]);

/** Method table for a static type, if it has methods. */
export function methodsOfType(t: Type): ReadonlyMap<string, MethodSpec> | undefined {
  switch (t.k) {
    case "time":
      return TIME_METHODS;
    case "duration":
      return DURATION_METHODS;
    case "month":
    case "weekday":
    case "location":
      return STRING_ONLY;
    default:
      return undefined;
  }
}

/** Method table for a runtime value, if it has methods. */
export function methodsOfValue(v: Value): ReadonlyMap<string, MethodSpec> | undefined {
  if (v instanceof GoTime) return TIME_METHODS;
  if (v instanceof Duration) return DURATION_METHODS;
  if (v instanceof GoMonth || v instanceof GoWeekday || v instanceof Location) return STRING_ONLY;
  return undefined;
}

function stringArg(v: Value): string {
  if (typeof v !== "string") throw new FilterRuntimeError("invalid argument: expected string");
  return v;
}
