/**
 * Small inline-SVG charts for the HTML report: no scripts, no external files. Every number shown
 * is also written as text, so the report reads (and tests) without a chart library.
 */
const WIDTH = 640;
const HEIGHT = 240;
const LEFT = 56;
const RIGHT = 16;
const TOP = 16;
const BOTTOM = 40;
const PLOT_W = WIDTH - LEFT - RIGHT;
const PLOT_H = HEIGHT - TOP - BOTTOM;
const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#be185d'];

export function escapeHtml(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

function fmt(value: number): string {
  return Math.abs(value) >= 100 || Number.isInteger(value) ? value.toFixed(0) : value.toFixed(1);
}

/** Round tick values covering [min, max]. */
function ticks(min: number, max: number, count = 5): number[] {
  const span = max - min || 1;
  const raw = span / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? raw;
  const out: number[] = [];
  for (let v = Math.ceil(min / step) * step; v <= max + step * 1e-9; v += step) {
    out.push(Number(v.toPrecision(12)));
  }
  return out;
}

function frame(title: string, body: string, xLabel: string, yLabel: string): string {
  return (
    `<svg class="chart" role="img" aria-label="${escapeHtml(title)}" viewBox="0 0 ${WIDTH} ${HEIGHT}" width="${WIDTH}" height="${HEIGHT}" xmlns="http://www.w3.org/2000/svg">` +
    `<title>${escapeHtml(title)}</title>` +
    `<rect x="${LEFT}" y="${TOP}" width="${PLOT_W}" height="${PLOT_H}" fill="#fafafa" stroke="#ccc"/>` +
    body +
    `<text x="${LEFT + PLOT_W / 2}" y="${HEIGHT - 6}" text-anchor="middle" font-size="12">${escapeHtml(xLabel)}</text>` +
    `<text x="12" y="${TOP + PLOT_H / 2}" text-anchor="middle" font-size="12" transform="rotate(-90 12 ${TOP + PLOT_H / 2})">${escapeHtml(yLabel)}</text>` +
    `</svg>`
  );
}

function axes(
  xMin: number,
  xMax: number,
  yMin: number,
  yMax: number,
): {
  x: (v: number) => number;
  y: (v: number) => number;
  svg: string;
} {
  const x = (v: number): number => LEFT + ((v - xMin) / (xMax - xMin || 1)) * PLOT_W;
  const y = (v: number): number => TOP + PLOT_H - ((v - yMin) / (yMax - yMin || 1)) * PLOT_H;
  let svg = '';
  for (const t of ticks(xMin, xMax)) {
    svg += `<line x1="${x(t)}" x2="${x(t)}" y1="${TOP + PLOT_H}" y2="${TOP + PLOT_H + 4}" stroke="#666"/>`;
    svg += `<text x="${x(t)}" y="${TOP + PLOT_H + 16}" text-anchor="middle" font-size="11">${fmt(t)}</text>`;
  }
  for (const t of ticks(yMin, yMax)) {
    svg += `<line x1="${LEFT}" x2="${LEFT + PLOT_W}" y1="${y(t)}" y2="${y(t)}" stroke="#e5e5e5"/>`;
    svg += `<text x="${LEFT - 6}" y="${y(t) + 4}" text-anchor="end" font-size="11">${fmt(t)}</text>`;
  }
  return { x, y, svg };
}

export function histogram(values: readonly number[], title: string, xLabel: string): string {
  if (values.length === 0) {
    return `<p class="empty">${escapeHtml(title)}: no values.</p>`;
  }
  // A range of at least 10 units, so a single value still gets a readable axis.
  const low = Math.min(...values);
  const high = Math.max(...values);
  const pad = Math.max(0, 10 - (high - low)) / 2;
  const min = low - pad;
  const max = high + pad;
  const bins = Math.min(40, Math.max(5, Math.ceil(Math.sqrt(values.length))));
  const width = (max - min || 1) / bins;
  const counts = new Array<number>(bins).fill(0);
  for (const v of values) {
    counts[Math.min(bins - 1, Math.floor((v - min) / width))]!++;
  }
  const top = Math.max(...counts);
  const a = axes(min, min + width * bins, 0, top);
  let bars = '';
  counts.forEach((count, i) => {
    const x0 = a.x(min + i * width);
    const x1 = a.x(min + (i + 1) * width);
    bars +=
      `<rect class="bar" x="${x0 + 0.5}" y="${a.y(count)}" width="${Math.max(0.5, x1 - x0 - 1)}" height="${a.y(0) - a.y(count)}" fill="${COLORS[0]}">` +
      `<title>${fmt(min + i * width)}–${fmt(min + (i + 1) * width)}: ${count}</title></rect>`;
  });
  return frame(title, a.svg + bars, xLabel, 'turns');
}

export function cdf(
  values: readonly number[],
  title: string,
  xLabel: string,
  markers: readonly { label: string; value: number }[],
): string {
  if (values.length === 0) {
    return `<p class="empty">${escapeHtml(title)}: no values.</p>`;
  }
  const sorted = [...values].sort((p, q) => p - q);
  const first = sorted[0]!;
  const last = sorted[sorted.length - 1]!;
  const pad = Math.max(0, 10 - (last - first)) / 2;
  const a = axes(first - pad, last + pad, 0, 1);
  const path = sorted
    .map(
      (v, i) =>
        `${i === 0 ? 'M' : 'L'}${a.x(v).toFixed(1)},${a.y((i + 1) / sorted.length).toFixed(1)}`,
    )
    .join(' ');
  let body = `<path class="line" d="${path}" fill="none" stroke="${COLORS[0]}" stroke-width="2"/>`;
  markers.forEach((marker, i) => {
    const x = a.x(marker.value);
    // Labels stack down the left of their lines, so close markers stay readable.
    body +=
      `<line x1="${x}" x2="${x}" y1="${TOP}" y2="${TOP + PLOT_H}" stroke="${COLORS[1]}" stroke-dasharray="4 3"/>` +
      `<text x="${x - 3}" y="${TOP + 12 + i * 13}" text-anchor="end" font-size="11" fill="${COLORS[1]}">${escapeHtml(marker.label)} ${fmt(marker.value)}</text>`;
  });
  return frame(title, a.svg + body, xLabel, 'fraction of turns');
}

export interface Series {
  name: string;
  points: { x: number; y: number }[];
}

export function lineChart(
  series: readonly Series[],
  title: string,
  xLabel: string,
  yLabel: string,
): string {
  const all = series.flatMap((s) => s.points);
  if (all.length === 0) {
    return `<p class="empty">${escapeHtml(title)}: no values.</p>`;
  }
  const a = axes(
    Math.min(...all.map((p) => p.x)),
    Math.max(...all.map((p) => p.x)),
    Math.min(0, ...all.map((p) => p.y)),
    Math.max(...all.map((p) => p.y)),
  );
  let body = '';
  series.forEach((s, index) => {
    const color = COLORS[index % COLORS.length]!;
    const d = s.points
      .map((p, i) => `${i === 0 ? 'M' : 'L'}${a.x(p.x).toFixed(1)},${a.y(p.y).toFixed(1)}`)
      .join(' ');
    body += `<path class="line" d="${d}" fill="none" stroke="${color}" stroke-width="2"/>`;
    for (const p of s.points) {
      body += `<circle cx="${a.x(p.x)}" cy="${a.y(p.y)}" r="3" fill="${color}"><title>${escapeHtml(s.name)} at ${fmt(p.x)}: ${fmt(p.y)}</title></circle>`;
    }
    body += `<text x="${LEFT + 8}" y="${TOP + 14 + index * 14}" font-size="11" fill="${color}">${escapeHtml(s.name)}</text>`;
  });
  return frame(title, a.svg + body, xLabel, yLabel);
}

/** One horizontal bar per row, split into named stages (ms). */
export function stackedBars(
  rows: readonly { label: string; stagesMs: Record<string, number> }[],
  title: string,
): string {
  if (rows.length === 0) {
    return `<p class="empty">${escapeHtml(title)}: no values.</p>`;
  }
  const stages = [...new Set(rows.flatMap((r) => Object.keys(r.stagesMs)))];
  const rowH = 14;
  const height = TOP + rows.length * rowH + 56;
  const total = Math.max(
    ...rows.map((r) => Object.values(r.stagesMs).reduce((s, v) => s + Math.max(0, v), 0)),
  );
  const x = (v: number): number => 120 + (v / (total || 1)) * (WIDTH - 120 - RIGHT);
  let body = '';
  rows.forEach((row, i) => {
    let at = 0;
    const y = TOP + i * rowH;
    body += `<text x="116" y="${y + 10}" text-anchor="end" font-size="10">${escapeHtml(row.label)}</text>`;
    stages.forEach((stage, s) => {
      const v = Math.max(0, row.stagesMs[stage] ?? 0);
      body += `<rect class="bar" x="${x(at)}" y="${y}" width="${x(at + v) - x(at)}" height="${rowH - 3}" fill="${COLORS[s % COLORS.length]}"><title>${escapeHtml(row.label)} ${escapeHtml(stage)}: ${fmt(v)} ms</title></rect>`;
      at += v;
    });
  });
  const legendY = TOP + rows.length * rowH + 16;
  stages.forEach((stage, s) => {
    body += `<rect x="${120 + s * 130}" y="${legendY}" width="10" height="10" fill="${COLORS[s % COLORS.length]}"/><text x="${134 + s * 130}" y="${legendY + 9}" font-size="11">${escapeHtml(stage)}</text>`;
  });
  body += `<text x="${WIDTH - RIGHT}" y="${legendY + 30}" text-anchor="end" font-size="11">full bar = ${fmt(total)} ms</text>`;
  return (
    `<svg class="chart" role="img" aria-label="${escapeHtml(title)}" viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" xmlns="http://www.w3.org/2000/svg"><title>${escapeHtml(title)}</title>` +
    body +
    '</svg>'
  );
}
