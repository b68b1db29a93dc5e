import { html } from "htm/preact";

export interface Series {
  label: string;
  /** A CSS colour (usually a variable). */
  color: string;
  values: number[];
  /** How the latest value is written in the legend. */
  format: (v: number) => string;
}

/** A readable upper bound: 1, 2, 5 × 10^k at or above the largest value. */
function niceMax(v: number): number {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

const W = 600;
const H = 160;

/**
 * A small line chart over the last `points` samples (one a second), drawn in SVG. For screen
 * readers it is an image whose label gives each series' latest value.
 */
export function LineChart(props: { title: string; series: Series[]; points?: number; testid?: string }) {
  const n = props.points ?? 120;
  const max = niceMax(Math.max(0, ...props.series.flatMap((s) => s.values.slice(-n))));
  const latest = props.series.map((s) => `${s.label} ${s.format(s.values.at(-1) ?? 0)}`).join(", ");
  const path = (values: number[]) => {
    const tail = values.slice(-n);
    if (tail.length === 0) return "";
    const step = W / Math.max(1, n - 1);
    const x0 = W - (tail.length - 1) * step;
    return tail
      .map(
        (v, i) =>
          `${i === 0 ? "M" : "L"}${(x0 + i * step).toFixed(1)},${(H - (v / max) * (H - 8)).toFixed(1)}`,
      )
      .join(" ");
  };
  return html`<figure class="chart" data-testid=${props.testid}>
    <figcaption>
      <span class="chart-title">${props.title}</span>
      <span class="legend">
        ${props.series.map(
          (s) => html`<span class="legend-item" key=${s.label}>
            <span class="swatch" style=${`background:${s.color}`} aria-hidden="true"></span>
            ${s.label} <strong data-series=${s.label}>${s.format(s.values.at(-1) ?? 0)}</strong>
          </span>`,
        )}
      </span>
    </figcaption>
    <div class="chart-plot">
      <span class="chart-max" aria-hidden="true">${props.series[0]?.format(max) ?? max}</span>
      <svg viewBox=${`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-label=${`${props.title}: ${latest}`}>
        <line x1="0" y1=${H - 0.5} x2=${W} y2=${H - 0.5} class="axis" />
        <line x1="0" y1=${H / 2} x2=${W} y2=${H / 2} class="grid" />
        <line x1="0" y1="8" x2=${W} y2="8" class="grid" />
        ${props.series.map(
          (s) => html`<path
            key=${s.label}
            d=${path(s.values)}
            fill="none"
            stroke=${s.color}
            stroke-width="2"
            vector-effect="non-scaling-stroke"
            stroke-linejoin="round"
          />`,
        )}
      </svg>
    </div>
  </figure>`;
}
