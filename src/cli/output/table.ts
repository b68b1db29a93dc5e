/** Columns to align to the right (numbers). */
export type RightAligned = ReadonlySet<number>;

/**
 * An aligned table for people: a header row, then one row per item, columns separated by two
 * spaces. The last column is not padded (long bodies do not drag trailing blanks along).
 */
export function table(header: string[], rows: string[][], right: RightAligned = new Set()): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => {
        if (i === cells.length - 1 && !right.has(i)) return cell;
        return right.has(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!);
      })
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

/** `key  value` lines with the keys aligned. */
export function keyValues(pairs: [string, string][]): string {
  const width = Math.max(...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join("\n");
}
