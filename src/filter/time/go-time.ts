/**
 * Go time.Time: an instant with nanosecond precision and a location.
 */
import type { Int } from "../runtime/values.js";
import { intFromBig } from "../runtime/values.js";
import { civilFromDays, daysFromCivil, floorDiv, floorMod, weekdayOfDays, yearDay } from "./calendar.js";
import { type Location, UTC } from "./zones.js";

/** Unix second of Go's zero time, January 1, year 1, 00:00:00 UTC. */
export const ZERO_TIME_SEC = -62135596800;

/** Broken-down wall-clock fields of a time in its location. */
export interface Civil {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  nsec: number;
  weekday: number;
  yday: number;
  offset: number;
  abbr: string;
}

export class GoTime {
  readonly goTypeName = "time.Time";
  private civilCache: Civil | undefined;

  constructor(
    /** Seconds since the Unix epoch. */
    readonly sec: number,
    /** Nanoseconds within the second, 0..999999999. */
    readonly nsec: number,
    readonly loc: Location,
  ) {}

  /** A time from epoch milliseconds, in UTC. */
  static fromEpochMs(ms: number, loc: Location = UTC): GoTime {
    const sec = Math.floor(ms / 1000);
    const nsec = Math.round((ms - sec * 1000) * 1e6);
    return new GoTime(sec, nsec, loc);
  }

  /** Go time.Date: normalizes out-of-range fields, interprets the wall time in `loc`. */
  static date(
    year: number,
    month: number,
    day: number,
    hour: number,
    minute: number,
    second: number,
    nsec: number,
    loc: Location,
  ): GoTime {
    // Normalize month into 1..12 carrying into the year.
    const m0 = month - 1;
    year += floorDiv(m0, 12);
    month = floorMod(m0, 12) + 1;
    second += floorDiv(nsec, 1e9);
    nsec = floorMod(nsec, 1e9);
    const days = daysFromCivil(year, month, 1) + (day - 1);
    const wall = days * 86400 + hour * 3600 + minute * 60 + second;
    if (loc.isFixed) return new GoTime(wall - loc.lookup(wall).offset, nsec, loc);
    // Same two-step lookup as Go: guess with the wall time, re-check near transitions.
    const off1 = loc.lookup(wall).offset;
    let utc = wall - off1;
    const off2 = loc.lookup(utc).offset;
    if (off2 !== off1) utc = wall - off2;
    return new GoTime(utc, nsec, loc);
  }

  hashKey(): string {
    return `t${this.sec}.${this.nsec}.${this.loc.name}`;
  }

  /** Wall-clock fields in this time's location. */
  civil(): Civil {
    if (this.civilCache) return this.civilCache;
    const zone = this.loc.lookup(this.sec);
    const local = this.sec + zone.offset;
    const days = Math.floor(local / 86400);
    const secOfDay = local - days * 86400;
    const [year, month, day] = civilFromDays(days);
    const c: Civil = {
      year,
      month,
      day,
      hour: Math.floor(secOfDay / 3600),
      minute: Math.floor((secOfDay % 3600) / 60),
      second: secOfDay % 60,
      nsec: this.nsec,
      weekday: weekdayOfDays(days),
      yday: yearDay(year, month, day),
      offset: zone.offset,
      abbr: zone.abbr,
    };
    this.civilCache = c;
    return c;
  }

  in(loc: Location): GoTime {
    return new GoTime(this.sec, this.nsec, loc);
  }

  /** Nanoseconds since the Unix epoch as a bigint. */
  unixNanoBig(): bigint {
    return BigInt(this.sec) * 1000000000n + BigInt(this.nsec);
  }

  unixNano(): Int {
    return intFromBig(this.unixNanoBig());
  }

  /** Adds a number of nanoseconds (bigint), as Go's Add. */
  addNanos(ns: bigint): GoTime {
    const total = BigInt(this.nsec) + ns;
    const secDelta = total >= 0n ? total / 1000000000n : -((-total + 999999999n) / 1000000000n);
    const nsec = Number(total - secDelta * 1000000000n);
    return new GoTime(this.sec + Number(secDelta), nsec, this.loc);
  }

  compare(o: GoTime): number {
    if (this.sec !== o.sec) return this.sec < o.sec ? -1 : 1;
    if (this.nsec !== o.nsec) return this.nsec < o.nsec ? -1 : 1;
    return 0;
  }

  equal(o: GoTime): boolean {
    return this.sec === o.sec && this.nsec === o.nsec;
  }

  isZero(): boolean {
    return this.sec === ZERO_TIME_SEC && this.nsec === 0;
  }
}

const MAX_DURATION = 9223372036854775807n;
const MIN_DURATION = -9223372036854775808n;

/** Go t.Sub(u): the duration between two times, saturated to the int64 range. */
export function subTimes(t: GoTime, u: GoTime): bigint {
  const d = t.unixNanoBig() - u.unixNanoBig();
  if (d > MAX_DURATION) return MAX_DURATION;
  if (d < MIN_DURATION) return MIN_DURATION;
  return d;
}
