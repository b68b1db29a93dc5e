// A small SVG bar chart (no dependencies): groups of horizontal bars on a log scale, one colour per
// system, the figure printed at the end of each bar.

export interface ChartGroup {
  title: string;
  bars: { system: string; value: number }[];
}

const PALETTE = [
  "#2563eb",
  "#9ca3af",
  "#16a34a",
  "#f59e0b",
  "#dc2626",
  "#7c3aed",
  "#0891b2",
  "#db2777",
  "#65a30d",
  "#78716c",
];

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString("en-US") : n.toFixed(n >= 10 ? 1 : 2));

export function barChart(title: string, unit: string, groups: ChartGroup[]): string {
  const systems = [...new Set(groups.flatMap((g) => g.bars.map((b) => b.system)))];
  const colour = new Map(systems.map((s, i) => [s, PALETTE[i % PALETTE.length]!]));
  const values = groups.flatMap((g) => g.bars.map((b) => b.value)).filter((v) => v > 0);
  const lo = 10 ** Math.floor(Math.log10(Math.min(...values)));
  const hi = 10 ** Math.ceil(Math.log10(Math.max(...values)));
  const left = 210;
  const width = 560;
  const barH = 14;
  const gap = 4;
  const x = (v: number) =>
    ((Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * width;
  const out: string[] = [];
  let y = 40;
  for (const g of groups) {
    out.push(`<text x="8" y="${y + 11}" font-weight="bold">${esc(g.title)}</text>`);
    y += 18;
    for (const b of g.bars) {
      const w = Math.max(1, x(b.value));
      out.push(
        `<text x="${left - 6}" y="${y + 11}" text-anchor="end">${esc(b.system)}</text>`,
        `<rect x="${left}" y="${y}" width="${w.toFixed(1)}" height="${barH}" fill="${colour.get(b.system)}"/>`,
        `<text x="${(left + w + 4).toFixed(1)}" y="${y + 11}">${fmt(b.value)}</text>`,
      );
      y += barH + gap;
    }
    y += 10;
  }
  const axis: string[] = [];
  for (let v = lo; v <= hi; v *= 10) {
    const px = left + x(v);
    axis.push(
      `<line x1="${px}" y1="32" x2="${px}" y2="${y - 6}" stroke="#e5e7eb"/>`,
      `<text x="${px}" y="${y + 8}" text-anchor="middle" fill="#6b7280">${fmt(v)}</text>`,
    );
  }
  const h = y + 20;
  const w = left + width + 90;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" font-family="sans-serif" font-size="11" role="img">`,
    `<title>${esc(title)} (${esc(unit)}, log scale)</title>`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="8" y="18" font-size="13" font-weight="bold">${esc(title)} (${esc(unit)}, log scale)</text>`,
    ...axis,
    ...out,
    "</svg>",
    "",
  ].join("\n");
}

/** Three significant figures below 100 (a latency of 0.013 ms), whole numbers above. */
const small = (n: number) =>
  n >= 100 ? Math.round(n).toLocaleString("en-US") : String(Number(n.toPrecision(3)));

export interface Series {
  system: string;
  points: { x: number; y: number }[];
}

/**
 * A small SVG line chart: one line per system against x, both axes on a log scale (cost growing
 * with a backlog or a concurrency reads as a slope), every point's figure printed beside it.
 */
export function lineChart(title: string, xLabel: string, unit: string, series: Series[]): string {
  const xs = series.flatMap((s) => s.points.map((p) => p.x)).filter((v) => v > 0);
  const ys = series.flatMap((s) => s.points.map((p) => p.y)).filter((v) => v > 0);
  const span = (vs: number[]) => {
    const lo = 10 ** Math.floor(Math.log10(Math.min(...vs)));
    const hi = 10 ** Math.ceil(Math.log10(Math.max(...vs)));
    return [lo, hi === lo ? lo * 10 : hi] as const;
  };
  const [xlo, xhi] = span(xs);
  const [ylo, yhi] = span(ys);
  const left = 70;
  const top = 36;
  const width = 560;
  const height = 280;
  const logPos = (v: number, lo: number, hi: number) =>
    (Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo));
  const px = (v: number) => left + logPos(v, xlo, xhi) * width;
  const py = (v: number) => top + height - logPos(v, ylo, yhi) * height;
  const out: string[] = [];
  for (let v = ylo; v <= yhi * 1.001; v *= 10) {
    out.push(
      `<line x1="${left}" y1="${py(v).toFixed(1)}" x2="${left + width}" y2="${py(v).toFixed(1)}" stroke="#e5e7eb"/>`,
      `<text x="${left - 6}" y="${(py(v) + 4).toFixed(1)}" text-anchor="end" fill="#6b7280">${small(v)}</text>`,
    );
  }
  const ticks = [...new Set(xs)].sort((a, b) => a - b);
  for (const v of ticks) {
    out.push(
      `<line x1="${px(v).toFixed(1)}" y1="${top}" x2="${px(v).toFixed(1)}" y2="${top + height}" stroke="#f3f4f6"/>`,
      `<text x="${px(v).toFixed(1)}" y="${top + height + 14}" text-anchor="middle" fill="#6b7280">${v.toLocaleString("en-US")}</text>`,
    );
  }
  out.push(
    `<text x="${left + width / 2}" y="${top + height + 32}" text-anchor="middle">${esc(xLabel)} (log scale)</text>`,
  );
  series.forEach((s, i) => {
    const colour = PALETTE[i % PALETTE.length]!;
    const pts = [...s.points].sort((a, b) => a.x - b.x);
    out.push(
      `<polyline fill="none" stroke="${colour}" stroke-width="2" points="${pts.map((p) => `${px(p.x).toFixed(1)},${py(p.y).toFixed(1)}`).join(" ")}"/>`,
    );
    for (const p of pts) {
      out.push(
        `<circle cx="${px(p.x).toFixed(1)}" cy="${py(p.y).toFixed(1)}" r="3" fill="${colour}"/>`,
        `<text x="${(px(p.x) + 5).toFixed(1)}" y="${(py(p.y) - 5).toFixed(1)}" fill="${colour}">${small(p.y)}</text>`,
      );
    }
    const ly = top + height + 50 + i * 16;
    out.push(
      `<rect x="${left}" y="${ly - 9}" width="12" height="10" fill="${colour}"/>`,
      `<text x="${left + 18}" y="${ly}">${esc(s.system)}</text>`,
    );
  });
  const h = top + height + 50 + series.length * 16 + 8;
  const w = left + width + 60;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" font-family="sans-serif" font-size="11" role="img">`,
    `<title>${esc(title)} (${esc(unit)}, log scales)</title>`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="8" y="18" font-size="13" font-weight="bold">${esc(title)} (${esc(unit)}, log scale)</text>`,
    ...out,
    "</svg>",
    "",
  ].join("\n");
}
