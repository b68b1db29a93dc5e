/** Date and time builtins: now, duration, date, timezone. */
import { FilterRuntimeError } from "../errors.js";
import type { Ctx } from "../runtime/context.js";
import { Duration, goTypeName, intFromBig, type Value } from "../runtime/values.js";
import { parseDuration } from "../time/duration.js";
import { GoTime } from "../time/go-time.js";
import { LAYOUTS, parseTime } from "../time/go-time-layout.js";
import { Location, loadLocation, localZone } from "../time/zones.js";
import { DURATION, isUnknown, LOCATION, STRING, TIME, type Type } from "../types.js";
import { argName, CheckError, overloads } from "./signature.js";
import type { Builtin } from "./types.js";

const DEFAULT_LAYOUTS = [
  "2006-01-02",
  "15:04:05",
  "2006-01-02 15:04:05",
  LAYOUTS.RFC3339,
  LAYOUTS.RFC822,
  LAYOUTS.RFC850,
  LAYOUTS.RFC1123,
];

function strArg(v: Value): string {
  if (typeof v === "string") return v;
  throw new FilterRuntimeError(`interface conversion: interface {} is ${goTypeName(v)}, not string`);
}

/** The `date` builtin; `tz` is the compile-time Timezone option, if any. */
export function dateBuiltin(argsIn: Value[], tzOption: Location | undefined): GoTime {
  let args = argsIn;
  let tz = tzOption;
  if (args[0] instanceof Location) {
    tz = args[0];
    args = args.slice(1);
  }
  const s = strArg(args[0] ?? null);
  if (args.length === 2) {
    const layout = strArg(args[1] ?? null);
    return tz ? parseTime(layout, s, tz, tz) : parseTime(layout, s);
  }
  if (args.length === 3) {
    const layout = strArg(args[1] ?? null);
    const loc = loadLocation(strArg(args[2] ?? null));
    return parseTime(layout, s, loc, loc);
  }
  for (const layout of DEFAULT_LAYOUTS) {
    try {
      return tz ? parseTime(layout, s, tz, tz) : parseTime(layout, s);
    } catch (e) {
      if (!(e instanceof FilterRuntimeError)) throw e;
    }
  }
  throw new FilterRuntimeError(`invalid date ${s}`);
}

export function nowIn(loc: Location): GoTime {
  const ms = Date.now();
  // Sub-millisecond digits from the high-resolution clock, for a nanosecond-looking time.
  const sub = Number(process.hrtime.bigint() % 1000000n);
  const t = GoTime.fromEpochMs(ms, loc);
  return new GoTime(t.sec, t.nsec + sub, loc);
}

export const TIME_BUILTINS: Record<string, Builtin> = {
  now: {
    check: (args) => {
      if (args.length === 0) return TIME;
      if (args.length === 1) {
        const t = args[0] as Type;
        if (t.k === "location" || isUnknown(t)) return TIME;
        throw new CheckError(`cannot use ${argName(t)} as argument (type *time.Location) to call now`);
      }
      throw new CheckError("too many arguments to call now");
    },
    call: (c: Ctx, a) => {
      if (a.length === 1) {
        const loc = a[0];
        if (!(loc instanceof Location))
          throw new FilterRuntimeError("invalid argument for now: expected *time.Location");
        return nowIn(loc);
      }
      return nowIn(c.tz ?? localZone());
    },
  },
  duration: {
    check: (args) => overloads("duration", [[STRING]], DURATION, args),
    call: (_c, a) => new Duration(intFromBig(parseDuration(strArg(a[0] ?? null)))),
  },
  date: {
    check: (args) => {
      if (args.length < 1) throw new CheckError("not enough arguments to call date");
      if (args.length > 4) throw new CheckError("too many arguments to call date");
      return TIME;
    },
    call: (c, a) => dateBuiltin(a, c.tz),
  },
  timezone: {
    check: (args) => overloads("timezone", [[STRING]], LOCATION, args),
    call: (_c, a) => loadLocation(strArg(a[0] ?? null)),
  },
};
