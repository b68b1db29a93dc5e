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
