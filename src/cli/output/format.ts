/** A duration in ms the way a person reads it: `0`, `250ms`, `30s`, `1h30m`, `14d`. */
export function humanDuration(ms: number): string {
  if (ms === 0) return "0";
  if (ms < 0) return `-${humanDuration(-ms)}`;
  if (ms < 1000 || ms % 1000 !== 0)
    return ms < 1000 ? `${ms}ms` : `${(ms / 1000).toFixed(3).replace(/\.?0+$/, "")}s`;
  const units: [string, number][] = [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
  ];
  let rest = ms;
  let out = "";
  for (const [unit, size] of units) {
    const n = Math.floor(rest / size);
    if (n > 0) out += `${n}${unit}`;
    rest -= n * size;
  }
  return out;
}

/** An epoch-ms instant as ISO 8601 UTC, or "" for 0/absent. */
export function instant(ms: number | undefined): string {
  return ms ? new Date(ms).toISOString() : "";
}

/** A byte count with a binary unit: `512 B`, `1.5 KiB`, `12.0 MiB`. */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = n;
  let unit = "B";
  for (const u of units) {
    if (value < 1024) break;
    value /= 1024;
    unit = u;
  }
  return `${value.toFixed(1)} ${unit}`;
}
