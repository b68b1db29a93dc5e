/**
 * Go reference-time layouts ("2006-01-02T15:04:05Z07:00") for Time.Format and time.Parse,
 * ported from Go's time/format.go.
 */
import { FilterRuntimeError } from "../errors.js";
import { daysIn, isLeap } from "./calendar.js";
import { GoTime } from "./go-time.js";
import { Location, localZone, UTC } from "./zones.js";

enum Std {
  None = 0,
  LongMonth,
  Month,
  NumMonth,
  ZeroMonth,
  LongWeekDay,
  WeekDay,
  Day,
  UnderDay,
  ZeroDay,
  UnderYearDay,
  ZeroYearDay,
  Hour,
  Hour12,
  ZeroHour12,
  Minute,
  ZeroMinute,
  Second,
  ZeroSecond,
  LongYear,
  Year,
  PM,
  pm,
  TZ,
  ISO8601TZ,
  ISO8601SecondsTZ,
  ISO8601ShortTZ,
  ISO8601ColonTZ,
  ISO8601ColonSecondsTZ,
  NumTZ,
  NumSecondsTz,
  NumShortTZ,
  NumColonTZ,
  NumColonSecondsTZ,
  FracSecond0,
  FracSecond9,
}

interface Chunk {
  prefix: string;
  std: Std;
  /** For fractional seconds: digit count and separator. */
  digits: number;
  sep: string;
  suffix: string;
}

const STD0X = [Std.ZeroMonth, Std.ZeroDay, Std.ZeroHour12, Std.ZeroMinute, Std.ZeroSecond, Std.Year];

function startsWithLowerCase(s: string): boolean {
  if (s.length === 0) return false;
  const c = s.charCodeAt(0);
  return c >= 97 && c <= 122;
}

function isDigitAt(s: string, i: number): boolean {
  if (i >= s.length) return false;
  const c = s.charCodeAt(i);
  return c >= 48 && c <= 57;
}

function chunk(layout: string, i: number, std: Std, len: number, digits = 0, sep = ""): Chunk {
  return { prefix: layout.slice(0, i), std, digits, sep, suffix: layout.slice(i + len) };
}

function nextStdChunk(layout: string): Chunk {
  for (let i = 0; i < layout.length; i++) {
    const c = layout[i];
    switch (c) {
      case "J":
        if (layout.startsWith("Jan", i)) {
          if (layout.startsWith("January", i)) return chunk(layout, i, Std.LongMonth, 7);
          if (!startsWithLowerCase(layout.slice(i + 3))) return chunk(layout, i, Std.Month, 3);
        }
        break;
      case "M":
        if (layout.length >= i + 3) {
          if (layout.startsWith("Mon", i)) {
            if (layout.startsWith("Monday", i)) return chunk(layout, i, Std.LongWeekDay, 6);
            if (!startsWithLowerCase(layout.slice(i + 3))) return chunk(layout, i, Std.WeekDay, 3);
          }
          if (layout.startsWith("MST", i)) return chunk(layout, i, Std.TZ, 3);
        }
        break;
      case "0": {
        const n = layout[i + 1];
        if (n !== undefined && n >= "1" && n <= "6")
          return chunk(layout, i, STD0X[n.charCodeAt(0) - 49] as Std, 2);
        if (layout.startsWith("002", i)) return chunk(layout, i, Std.ZeroYearDay, 3);
        break;
      }
      case "1":
        if (layout[i + 1] === "5") return chunk(layout, i, Std.Hour, 2);
        return chunk(layout, i, Std.NumMonth, 1);
      case "2":
        if (layout.startsWith("2006", i)) return chunk(layout, i, Std.LongYear, 4);
        return chunk(layout, i, Std.Day, 1);
      case "_":
        if (layout[i + 1] === "2") {
          if (layout.startsWith("2006", i + 1)) {
            return {
              prefix: layout.slice(0, i + 1),
              std: Std.LongYear,
              digits: 0,
              sep: "",
              suffix: layout.slice(i + 5),
            };
          }
          return chunk(layout, i, Std.UnderDay, 2);
        }
        if (layout.startsWith("__2", i)) return chunk(layout, i, Std.UnderYearDay, 3);
        break;
      case "3":
        return chunk(layout, i, Std.Hour12, 1);
      case "4":
        return chunk(layout, i, Std.Minute, 1);
      case "5":
        return chunk(layout, i, Std.Second, 1);
      case "P":
        if (layout[i + 1] === "M") return chunk(layout, i, Std.PM, 2);
        break;
      case "p":
        if (layout[i + 1] === "m") return chunk(layout, i, Std.pm, 2);
        break;
      case "-":
        if (layout.startsWith("-070000", i)) return chunk(layout, i, Std.NumSecondsTz, 7);
        if (layout.startsWith("-07:00:00", i)) return chunk(layout, i, Std.NumColonSecondsTZ, 9);
        if (layout.startsWith("-0700", i)) return chunk(layout, i, Std.NumTZ, 5);
        if (layout.startsWith("-07:00", i)) return chunk(layout, i, Std.NumColonTZ, 6);
        if (layout.startsWith("-07", i)) return chunk(layout, i, Std.NumShortTZ, 3);
        break;
      case "Z":
        if (layout.startsWith("Z070000", i)) return chunk(layout, i, Std.ISO8601SecondsTZ, 7);
        if (layout.startsWith("Z07:00:00", i)) return chunk(layout, i, Std.ISO8601ColonSecondsTZ, 9);
        if (layout.startsWith("Z0700", i)) return chunk(layout, i, Std.ISO8601TZ, 5);
        if (layout.startsWith("Z07:00", i)) return chunk(layout, i, Std.ISO8601ColonTZ, 6);
        if (layout.startsWith("Z07", i)) return chunk(layout, i, Std.ISO8601ShortTZ, 3);
        break;
      case ".":
      case ",": {
        const ch = layout[i + 1];
        if (ch === "0" || ch === "9") {
          let j = i + 1;
          while (j < layout.length && layout[j] === ch) j++;
          if (!isDigitAt(layout, j)) {
            const std = ch === "0" ? Std.FracSecond0 : Std.FracSecond9;
            return chunk(layout, i, std, j - i, j - (i + 1), c);
          }
        }
        break;
      }
    }
  }
  return { prefix: layout, std: Std.None, digits: 0, sep: "", suffix: "" };
}

const LONG_MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];
const SHORT_MONTHS = LONG_MONTHS.map((m) => m.slice(0, 3));
const LONG_DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const SHORT_DAYS = LONG_DAYS.map((d) => d.slice(0, 3));

function pad(x: number, width: number): string {
  if (x < 0) return `-${pad(-x, width)}`;
  return String(x).padStart(width, "0");
}

/** Go Time.Format. */
export function formatTime(t: GoTime, layoutIn: string): string {
  const c = t.civil();
  let layout = layoutIn;
  let out = "";
  while (layout !== "") {
    const ch = nextStdChunk(layout);
    out += ch.prefix;
    if (ch.std === Std.None) break;
    layout = ch.suffix;
    switch (ch.std) {
      case Std.Year:
        out += pad(Math.abs(c.year) % 100, 2);
        break;
      case Std.LongYear:
        out += pad(c.year, 4);
        break;
      case Std.Month:
        out += SHORT_MONTHS[c.month - 1];
        break;
      case Std.LongMonth:
        out += LONG_MONTHS[c.month - 1];
        break;
      case Std.NumMonth:
        out += String(c.month);
        break;
      case Std.ZeroMonth:
        out += pad(c.month, 2);
        break;
      case Std.WeekDay:
        out += SHORT_DAYS[c.weekday];
        break;
      case Std.LongWeekDay:
        out += LONG_DAYS[c.weekday];
        break;
      case Std.Day:
        out += String(c.day);
        break;
      case Std.UnderDay:
        out += (c.day < 10 ? " " : "") + String(c.day);
        break;
      case Std.ZeroDay:
        out += pad(c.day, 2);
        break;
      case Std.UnderYearDay:
        out += (c.yday < 100 ? (c.yday < 10 ? "  " : " ") : "") + String(c.yday);
        break;
      case Std.ZeroYearDay:
        out += pad(c.yday, 3);
        break;
      case Std.Hour:
        out += pad(c.hour, 2);
        break;
      case Std.Hour12:
        out += String(c.hour % 12 === 0 ? 12 : c.hour % 12);
        break;
      case Std.ZeroHour12:
        out += pad(c.hour % 12 === 0 ? 12 : c.hour % 12, 2);
        break;
      case Std.Minute:
        out += String(c.minute);
        break;
      case Std.ZeroMinute:
        out += pad(c.minute, 2);
        break;
      case Std.Second:
        out += String(c.second);
        break;
      case Std.ZeroSecond:
        out += pad(c.second, 2);
        break;
      case Std.PM:
        out += c.hour >= 12 ? "PM" : "AM";
        break;
      case Std.pm:
        out += c.hour >= 12 ? "pm" : "am";
        break;
      case Std.ISO8601TZ:
      case Std.ISO8601ColonTZ:
      case Std.ISO8601SecondsTZ:
      case Std.ISO8601ShortTZ:
      case Std.ISO8601ColonSecondsTZ:
      case Std.NumTZ:
      case Std.NumColonTZ:
      case Std.NumSecondsTz:
      case Std.NumShortTZ:
      case Std.NumColonSecondsTZ: {
        const iso =
          ch.std === Std.ISO8601TZ ||
          ch.std === Std.ISO8601ColonTZ ||
          ch.std === Std.ISO8601SecondsTZ ||
          ch.std === Std.ISO8601ShortTZ ||
          ch.std === Std.ISO8601ColonSecondsTZ;
        if (c.offset === 0 && iso) {
          out += "Z";
          break;
        }
        let zone = Math.trunc(c.offset / 60);
        let absoffset = c.offset;
        if (zone < 0) {
          out += "-";
          zone = -zone;
          absoffset = -absoffset;
        } else {
          out += "+";
        }
        out += pad(Math.floor(zone / 60), 2);
        const colon =
          ch.std === Std.ISO8601ColonTZ ||
          ch.std === Std.NumColonTZ ||
          ch.std === Std.ISO8601ColonSecondsTZ ||
          ch.std === Std.NumColonSecondsTZ;
        if (colon) out += ":";
        if (ch.std !== Std.NumShortTZ && ch.std !== Std.ISO8601ShortTZ) out += pad(zone % 60, 2);
        if (
          ch.std === Std.ISO8601SecondsTZ ||
          ch.std === Std.NumSecondsTz ||
          ch.std === Std.NumColonSecondsTZ ||
          ch.std === Std.ISO8601ColonSecondsTZ
        ) {
          if (ch.std === Std.NumColonSecondsTZ || ch.std === Std.ISO8601ColonSecondsTZ) out += ":";
          out += pad(absoffset % 60, 2);
        }
        break;
      }
      case Std.TZ: {
        if (c.abbr !== "") {
          out += c.abbr;
          break;
        }
        let zone = Math.trunc(c.offset / 60);
        if (zone < 0) {
          out += "-";
          zone = -zone;
        } else {
          out += "+";
        }
        out += pad(Math.floor(zone / 60), 2) + pad(zone % 60, 2);
        break;
      }
      case Std.FracSecond0:
      case Std.FracSecond9: {
        const trim = ch.std === Std.FracSecond9;
        const n = ch.digits;
        if (trim && (n === 0 || c.nsec === 0)) break;
        let digits = pad(c.nsec, 9);
        if (n < 9) digits = digits.slice(0, n);
        let frac = ch.sep + digits;
        if (trim) {
          frac = frac.replace(/0+$/, "");
          if (frac === ch.sep) frac = "";
        }
        out += frac;
        break;
      }
    }
  }
  return out;
}

class ParseFailure extends Error {}

function getnum(s: string, fixed: boolean): [number, string] {
  if (!isDigitAt(s, 0)) throw new ParseFailure();
  if (!isDigitAt(s, 1)) {
    if (fixed) throw new ParseFailure();
    return [s.charCodeAt(0) - 48, s.slice(1)];
  }
  return [(s.charCodeAt(0) - 48) * 10 + (s.charCodeAt(1) - 48), s.slice(2)];
}

function getnum3(s: string, fixed: boolean): [number, string] {
  let n = 0;
  let i = 0;
  for (; i < 3 && isDigitAt(s, i); i++) n = n * 10 + (s.charCodeAt(i) - 48);
  if (i === 0 || (fixed && i !== 3)) throw new ParseFailure();
  return [n, s.slice(i)];
}

function cutspace(s: string): string {
  let i = 0;
  while (i < s.length && s[i] === " ") i++;
  return s.slice(i);
}

function skip(value: string, prefixIn: string): string {
  let prefix = prefixIn;
  while (prefix.length > 0) {
    if (prefix[0] === " ") {
      if (value.length > 0 && value[0] !== " ") throw new ParseFailure();
      prefix = cutspace(prefix);
      value = cutspace(value);
      continue;
    }
    if (value.length === 0 || value[0] !== prefix[0]) throw new ParseFailure();
    prefix = prefix.slice(1);
    value = value.slice(1);
  }
  return value;
}

function lookupName(tab: string[], val: string): [number, string] {
  for (let i = 0; i < tab.length; i++) {
    const v = tab[i] as string;
    if (val.length >= v.length && val.slice(0, v.length).toLowerCase() === v.toLowerCase()) {
      return [i, val.slice(v.length)];
    }
  }
  throw new ParseFailure();
}

/** Go atoi for short digit strings with an optional sign. */
function atoi(s: string): number {
  if (!/^[+-]?[0-9]+$/.test(s)) throw new ParseFailure();
  return Number(s);
}

function parseNanoseconds(value: string, nbytesIn: number): number {
  let nbytes = nbytesIn;
  if (value[0] !== "." && value[0] !== ",") throw new ParseFailure();
  if (nbytes > 10) nbytes = 10;
  const digits = value.slice(1, nbytes);
  if (!/^[0-9]*$/.test(digits) || digits === "") throw new ParseFailure();
  return Number(digits) * 10 ** (10 - nbytes);
}

function leadingInt(s: string): [number, string] {
  let i = 0;
  let x = 0;
  while (i < s.length && isDigitAt(s, i)) {
    x = x * 10 + (s.charCodeAt(i) - 48);
    i++;
  }
  return [x, s.slice(i)];
}

function parseSignedOffset(value: string): number {
  const sign = value[0];
  if (sign !== "-" && sign !== "+") return 0;
  const [x, rem] = leadingInt(value.slice(1));
  if (value.slice(1) === rem) return 0;
  if (x > 23) return 0;
  return value.length - rem.length;
}

function parseGMT(value: string): number {
  const rest = value.slice(3);
  if (rest.length === 0) return 3;
  return 3 + parseSignedOffset(rest);
}

function parseTimeZone(value: string): number {
  if (value.length < 3) return 0;
  if (value.startsWith("ChST") || value.startsWith("MeST")) return 4;
  if (value.startsWith("GMT")) return parseGMT(value);
  if (value[0] === "+" || value[0] === "-") return parseSignedOffset(value);
  let nUpper = 0;
  for (; nUpper < 6; nUpper++) {
    if (nUpper >= value.length) break;
    const c = value.charCodeAt(nUpper);
    if (c < 65 || c > 90) break;
  }
  switch (nUpper) {
    case 5:
      return value[4] === "T" ? 5 : 0;
    case 4:
      return value[3] === "T" || value.startsWith("WITA") ? 4 : 0;
    case 3:
      return 3;
    default:
      return 0;
  }
}

function parseError(layout: string, value: string, extra = ""): FilterRuntimeError {
  return new FilterRuntimeError(
    `parsing time ${JSON.stringify(value)} as ${JSON.stringify(layout)}: cannot parse${extra}`,
  );
}

/**
 * Go time.Parse (defaultLoc = UTC) / time.ParseInLocation (defaultLoc = loc, local = loc).
 */
export function parseTime(
  layoutIn: string,
  valueIn: string,
  defaultLoc: Location = UTC,
  local: Location = localZone(),
): GoTime {
  let layout = layoutIn;
  let value = valueIn;
  let amSet = false;
  let pmSet = false;
  let year = 0;
  let month = -1;
  let day = -1;
  let yday = -1;
  let hour = 0;
  let min = 0;
  let sec = 0;
  let nsec = 0;
  let z: Location | undefined;
  let zoneOffset = -1;
  let zoneName = "";
  for (;;) {
    const ch = nextStdChunk(layout);
    try {
      value = skip(value, ch.prefix);
    } catch {
      throw parseError(layoutIn, valueIn);
    }
    if (ch.std === Std.None) {
      if (value.length !== 0) throw parseError(layoutIn, valueIn, `: extra text: ${JSON.stringify(value)}`);
      break;
    }
    layout = ch.suffix;
    let rangeErr = "";
    try {
      switch (ch.std) {
        case Std.Year: {
          if (value.length < 2) throw new ParseFailure();
          const p = value.slice(0, 2);
          value = value.slice(2);
          year = atoi(p);
          year += year >= 69 ? 1900 : 2000;
          break;
        }
        case Std.LongYear: {
          if (value.length < 4 || !isDigitAt(value, 0)) throw new ParseFailure();
          const p = value.slice(0, 4);
          value = value.slice(4);
          year = atoi(p);
          break;
        }
        case Std.Month:
          [month, value] = lookupName(SHORT_MONTHS, value);
          month++;
          break;
        case Std.LongMonth:
          [month, value] = lookupName(LONG_MONTHS, value);
          month++;
          break;
        case Std.NumMonth:
        case Std.ZeroMonth:
          [month, value] = getnum(value, ch.std === Std.ZeroMonth);
          if (month <= 0 || month > 12) rangeErr = "month";
          break;
        case Std.WeekDay:
          [, value] = lookupName(SHORT_DAYS, value);
          break;
        case Std.LongWeekDay:
          [, value] = lookupName(LONG_DAYS, value);
          break;
        case Std.Day:
        case Std.UnderDay:
        case Std.ZeroDay:
          if (ch.std === Std.UnderDay && value[0] === " ") value = value.slice(1);
          [day, value] = getnum(value, ch.std === Std.ZeroDay);
          break;
        case Std.UnderYearDay:
        case Std.ZeroYearDay:
          for (let i = 0; i < 2; i++) {
            if (ch.std === Std.UnderYearDay && value[0] === " ") value = value.slice(1);
          }
          [yday, value] = getnum3(value, ch.std === Std.ZeroYearDay);
          break;
        case Std.Hour:
          [hour, value] = getnum(value, false);
          if (hour < 0 || hour >= 24) rangeErr = "hour";
          break;
        case Std.Hour12:
        case Std.ZeroHour12:
          [hour, value] = getnum(value, ch.std === Std.ZeroHour12);
          if (hour < 0 || hour > 12) rangeErr = "hour";
          break;
        case Std.Minute:
        case Std.ZeroMinute:
          [min, value] = getnum(value, ch.std === Std.ZeroMinute);
          if (min < 0 || min >= 60) rangeErr = "minute";
          break;
        case Std.Second:
        case Std.ZeroSecond: {
          [sec, value] = getnum(value, ch.std === Std.ZeroSecond);
          if (sec < 0 || sec >= 60) {
            rangeErr = "second";
            break;
          }
          // A fractional second in the input but not in the layout.
          if (value.length >= 2 && (value[0] === "." || value[0] === ",") && isDigitAt(value, 1)) {
            const next = nextStdChunk(layout).std;
            if (next === Std.FracSecond0 || next === Std.FracSecond9) break;
            let n = 2;
            while (n < value.length && isDigitAt(value, n)) n++;
            nsec = parseNanoseconds(value, n);
            value = value.slice(n);
          }
          break;
        }
        case Std.PM: {
          if (value.length < 2) throw new ParseFailure();
          const p = value.slice(0, 2);
          value = value.slice(2);
          if (p === "PM") pmSet = true;
          else if (p === "AM") amSet = true;
          else throw new ParseFailure();
          break;
        }
        case Std.pm: {
          if (value.length < 2) throw new ParseFailure();
          const p = value.slice(0, 2);
          value = value.slice(2);
          if (p === "pm") pmSet = true;
          else if (p === "am") amSet = true;
          else throw new ParseFailure();
          break;
        }
        case Std.ISO8601TZ:
        case Std.ISO8601ColonTZ:
        case Std.ISO8601SecondsTZ:
        case Std.ISO8601ShortTZ:
        case Std.ISO8601ColonSecondsTZ:
        case Std.NumTZ:
        case Std.NumShortTZ:
        case Std.NumColonTZ:
        case Std.NumSecondsTz:
        case Std.NumColonSecondsTZ: {
          if (
            (ch.std === Std.ISO8601TZ || ch.std === Std.ISO8601ShortTZ || ch.std === Std.ISO8601ColonTZ) &&
            value[0] === "Z"
          ) {
            value = value.slice(1);
            z = UTC;
            break;
          }
          let sign: string;
          let hh: string;
          let mm: string;
          let ss: string;
          if (ch.std === Std.ISO8601ColonTZ || ch.std === Std.NumColonTZ) {
            if (value.length < 6 || value[3] !== ":") throw new ParseFailure();
            [sign, hh, mm, ss] = [value.slice(0, 1), value.slice(1, 3), value.slice(4, 6), "00"];
            value = value.slice(6);
          } else if (ch.std === Std.NumShortTZ || ch.std === Std.ISO8601ShortTZ) {
            if (value.length < 3) throw new ParseFailure();
            [sign, hh, mm, ss] = [value.slice(0, 1), value.slice(1, 3), "00", "00"];
            value = value.slice(3);
          } else if (ch.std === Std.ISO8601ColonSecondsTZ || ch.std === Std.NumColonSecondsTZ) {
            if (value.length < 9 || value[3] !== ":" || value[6] !== ":") throw new ParseFailure();
            [sign, hh, mm, ss] = [value.slice(0, 1), value.slice(1, 3), value.slice(4, 6), value.slice(7, 9)];
            value = value.slice(9);
          } else if (ch.std === Std.ISO8601SecondsTZ || ch.std === Std.NumSecondsTz) {
            if (value.length < 7) throw new ParseFailure();
            [sign, hh, mm, ss] = [value.slice(0, 1), value.slice(1, 3), value.slice(3, 5), value.slice(5, 7)];
            value = value.slice(7);
          } else {
            if (value.length < 5) throw new ParseFailure();
            [sign, hh, mm, ss] = [value.slice(0, 1), value.slice(1, 3), value.slice(3, 5), "00"];
            value = value.slice(5);
          }
          const [hr] = getnum(hh, true);
          const [mi] = getnum(mm, true);
          const [se] = getnum(ss, true);
          zoneOffset = (hr * 60 + mi) * 60 + se;
          if (sign === "-") zoneOffset = -zoneOffset;
          else if (sign !== "+") throw new ParseFailure();
          break;
        }
        case Std.TZ: {
          if (value.startsWith("UTC")) {
            z = UTC;
            value = value.slice(3);
            break;
          }
          const n = parseTimeZone(value);
          if (n === 0) throw new ParseFailure();
          zoneName = value.slice(0, n);
          value = value.slice(n);
          break;
        }
        case Std.FracSecond0: {
          const ndigit = 1 + ch.digits;
          if (value.length < ndigit) throw new ParseFailure();
          nsec = parseNanoseconds(value, ndigit);
          value = value.slice(ndigit);
          break;
        }
        case Std.FracSecond9: {
          if (value.length < 2 || (value[0] !== "." && value[0] !== ",") || !isDigitAt(value, 1)) break;
          let i = 0;
          while (i + 1 < value.length && isDigitAt(value, i + 1)) i++;
          nsec = parseNanoseconds(value, 1 + i);
          value = value.slice(1 + i);
          break;
        }
      }
    } catch (e) {
      if (e instanceof ParseFailure) throw parseError(layoutIn, valueIn);
      throw e;
    }
    if (rangeErr !== "") throw parseError(layoutIn, valueIn, `: ${rangeErr} out of range`);
  }
  if (pmSet && hour < 12) hour += 12;
  else if (amSet && hour === 12) hour = 0;

  if (yday >= 0) {
    let d = 0;
    let m = 0;
    if (isLeap(year)) {
      if (yday === 31 + 29) {
        m = 2;
        d = 29;
      } else if (yday > 31 + 29) {
        yday--;
      }
    }
    if (yday < 1 || yday > 365) throw parseError(layoutIn, valueIn, ": day-of-year out of range");
    if (m === 0) {
      const before = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365];
      m = Math.floor((yday - 1) / 31) + 1;
      if ((before[m] as number) < yday) m++;
      d = yday - (before[m - 1] as number);
    }
    if (month >= 0 && month !== m) throw parseError(layoutIn, valueIn, ": day-of-year does not match month");
    month = m;
    if (day >= 0 && day !== d) throw parseError(layoutIn, valueIn, ": day-of-year does not match day");
    day = d;
  } else {
    if (month < 0) month = 1;
    if (day < 0) day = 1;
  }
  if (day < 1 || day > daysIn(month, year)) throw parseError(layoutIn, valueIn, ": day out of range");

  if (z) return GoTime.date(year, month, day, hour, min, sec, nsec, z);
  if (zoneOffset !== -1) {
    const t = GoTime.date(year, month, day, hour, min, sec, nsec, UTC);
    const utcSec = t.sec - zoneOffset;
    const info = local.lookup(utcSec);
    if (info.offset === zoneOffset && (zoneName === "" || info.abbr === zoneName)) {
      return new GoTime(utcSec, t.nsec, local);
    }
    return new GoTime(utcSec, t.nsec, Location.fixedZone(zoneName, zoneOffset));
  }
  if (zoneName !== "") {
    const t = GoTime.date(year, month, day, hour, min, sec, nsec, UTC);
    const info = local.lookup(t.sec);
    if (info.abbr === zoneName) return new GoTime(t.sec - info.offset, t.nsec, local);
    let offset = 0;
    if (zoneName.length > 3 && zoneName.startsWith("GMT")) offset = Number(zoneName.slice(3)) * 3600;
    return new GoTime(t.sec - offset, t.nsec, Location.fixedZone(zoneName, offset));
  }
  return GoTime.date(year, month, day, hour, min, sec, nsec, defaultLoc);
}

/** Go time.RFC3339Nano etc. */
export const LAYOUTS = {
  RFC3339: "2006-01-02T15:04:05Z07:00",
  RFC3339Nano: "2006-01-02T15:04:05.999999999Z07:00",
  RFC822: "02 Jan 06 15:04 MST",
  RFC850: "Monday, 02-Jan-06 15:04:05 MST",
  RFC1123: "Mon, 02 Jan 2006 15:04:05 MST",
  String: "2006-01-02 15:04:05.999999999 -0700 MST",
} as const;
