import type { BenchResult, Rate } from './result-file.js';
import type { Distribution } from './stats.js';
import { cdf, escapeHtml, histogram, lineChart, stackedBars } from './svg-charts.js';

/**
 * A self-contained HTML report of one result: summary table, voice-to-voice histogram and CDF,
 * barge-in stop times, per-stage breakdown per turn, capacity curve and every turn's measures.
 * No external files; charts are inline SVG; one line of script only counts the drawn charts
 * (`data-charts-drawn` on <body>) so a headless browser can confirm the layout.
 */
const MAX_TURN_ROWS = 2000;
const MAX_STAGE_ROWS = 60;

export function renderHtmlReport(result: BenchResult): string {
  const s = result.summary;
  const turns = result.calls.flatMap((call) =>
    call.turns.map((turn) => ({ call: call.index, script: call.script, ...turn })),
  );
  const values = (f: (t: (typeof turns)[number]) => number | null): number[] =>
    turns.map(f).filter((v): v is number => v !== null && Number.isFinite(v));
  const v2v = values((t) => t.voiceToVoiceMs);
  const added = values((t) => t.addedMs);
  const bargeIn = values((t) => t.bargeInStopMs);
  const markers = (d: Distribution | null): { label: string; value: number }[] =>
    d === null
      ? []
      : [
          { label: 'p50', value: d.p50 },
          { label: 'p95', value: d.p95 },
          { label: 'p99', value: d.p99 },
        ];
  const staged = turns.filter((t) => t.stagesMs !== null).slice(0, MAX_STAGE_ROWS);
  const m = result.machine;
  const sections: string[] = [];
  sections.push(`<h1>Voice latency: ${escapeHtml(result.label)}</h1>
<p class="meta">${escapeHtml(m.date)} · ${m.cores} × ${escapeHtml(m.cpuModel)} · ${(m.memoryBytes / 2 ** 30).toFixed(1)} GiB · Node ${escapeHtml(m.nodeVersion)} (${escapeHtml(m.platform)}/${escapeHtml(m.arch)})<br>
Target: ${escapeHtml(result.target.transport)} ${escapeHtml(result.target.url ?? '')}${result.target.assistantId === null ? '' : ` · assistant ${escapeHtml(result.target.assistantId)}`} ·
${result.settings.calls} calls · scripts ${escapeHtml(result.settings.scripts.join(', '))} · expected latency ${result.settings.expectedLatencyMs === null ? 'not given' : `${result.settings.expectedLatencyMs} ms`}</p>`);
  sections.push(`<h2>Summary</h2>
<table id="summary"><thead><tr><th>Measure</th><th>n</th><th>p50</th><th>p95</th><th>p99</th><th>max</th></tr></thead><tbody>
${distributionRow('voice-to-voice', 'v2v', s.voiceToVoiceMs)}
${distributionRow('added (v2v − expected)', 'added', s.addedMs)}
${distributionRow('barge-in stop', 'barge-in', s.bargeInStopMs)}
${distributionRow('barge-in → clear message', 'clear', s.clearMs)}
${Object.entries(s.stagesMs)
  .map(([stage, d]) => distributionRow(`stage: ${stage}`, `stage-${stage}`, d))
  .join('\n')}
</tbody></table>
<table id="counts"><tbody>
<tr><th>Calls (failed)</th><td>${s.calls} (${s.failedCalls})</td><th>Turns</th><td>${s.turns}</td></tr>
<tr><th>False interruptions</th><td>${rate(s.falseInterruptions)}</td><th>Cut-offs</th><td>${rate(s.cutOffs)}</td></tr>
<tr><th>Late chunks / holes</th><td>${s.lateChunks} / ${s.holes} (${ms(s.holeMs)})</td><th>Silent gaps in speech</th><td>${s.silentGaps}</td></tr>
<tr><th>Missing replies</th><td>${s.missingReplies}</td><th>Skipped turns</th><td>${s.skippedTurns}</td></tr>
<tr><th>Harness pacing late p99 / max</th><td>${ms(result.pacing.lateP99Ms)} / ${ms(result.pacing.lateMaxMs)}</td><th>Harness CPU</th><td>${result.harnessCpuPercent.toFixed(0)} %</td></tr>
${result.server === null ? '' : `<tr><th>Server CPU</th><td>${result.server.cpuPercent.toFixed(0)} % of a core</td><th>Server peak RSS</th><td>${(result.server.peakRssBytes / 2 ** 20).toFixed(0)} MiB</td></tr>`}
${
  Object.keys(s.errors).length === 0
    ? ''
    : `<tr><th>Errors</th><td colspan="3">${escapeHtml(
        Object.entries(s.errors)
          .map(([c, n]) => `${c} × ${n}`)
          .join(', '),
      )}</td></tr>`
}
</tbody></table>`);
  sections.push(`<h2>Voice-to-voice</h2>
<p>Caller end of speech → first assistant audio, measured in the audio at the caller.</p>
<div class="charts">${histogram(v2v, 'Voice-to-voice histogram', 'ms')}${cdf(v2v, 'Voice-to-voice CDF', 'ms', markers(s.voiceToVoiceMs))}</div>
${added.length === 0 ? '' : `<div class="charts">${cdf(added, 'Added latency CDF', 'ms (voice-to-voice − expected)', markers(s.addedMs))}</div>`}`);
  sections.push(`<h2>Barge-in</h2>
<p>Caller speech onset during assistant speech → assistant audio stops.</p>
<div class="charts">${histogram(bargeIn, 'Barge-in stop histogram', 'ms')}</div>`);
  sections.push(`<h2>Per-stage breakdown</h2>
${
  staged.length === 0
    ? '<p class="empty">The server sent no per-stage timings (<code>{type: "metrics", latency}</code> messages).</p>'
    : stackedBars(
        staged.map((t) => ({ label: `call ${t.call} turn ${t.index}`, stagesMs: t.stagesMs! })),
        'Per-stage timings per turn',
      )
}`);
  sections.push(capacitySection(result));
  sections.push(`<h2>Every turn</h2><details><summary>${turns.length} turns${turns.length > MAX_TURN_ROWS ? ` (first ${MAX_TURN_ROWS} shown; all are in the JSON file)` : ''}</summary>
<table id="turns"><thead><tr><th>call</th><th>script</th><th>turn</th><th>kind</th><th>audio</th><th>v2v</th><th>added</th><th>barge-in stop</th><th>false int.</th><th>cut-off</th><th>late</th><th>holes</th></tr></thead><tbody>
${turns
  .slice(0, MAX_TURN_ROWS)
  .map(
    (t) =>
      `<tr><td>${t.call}</td><td>${escapeHtml(t.script)}</td><td>${t.index}</td><td>${t.kind}</td><td>${escapeHtml(t.label)}</td><td>${ms(t.voiceToVoiceMs)}</td><td>${ms(t.addedMs)}</td><td>${ms(t.bargeInStopMs)}</td><td>${t.falseInterruption === null ? '–' : t.falseInterruption ? 'yes' : 'no'}</td><td>${t.cutOff ? 'yes' : 'no'}</td><td>${t.lateChunks}</td><td>${t.holes}</td></tr>`,
  )
  .join('\n')}
</tbody></table></details>`);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Parla voice latency: ${escapeHtml(result.label)}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1340px;color:#111;padding:0 16px}
table{border-collapse:collapse;margin:8px 0 16px}th,td{border:1px solid #ddd;padding:3px 8px;text-align:right}
th:first-child,td:first-child{text-align:left}.meta{color:#555}.charts{display:flex;flex-wrap:wrap;gap:16px}
.empty{color:#777;font-style:italic}
</style></head>
<body data-charts-drawn="0">
${sections.join('\n')}
<script>document.body.dataset.chartsDrawn=String([...document.querySelectorAll('svg.chart')].filter(function(s){var b=s.getBBox();return b.width>0&&b.height>0;}).length);</script>
</body></html>
`;
}

function capacitySection(result: BenchResult): string {
  const c = result.capacity;
  if (c === null) {
    return '<h2>Capacity</h2><p class="empty">No capacity search in this run (--capacity).</p>';
  }
  const latency = lineChart(
    [
      {
        name: 'added p50',
        points: c.points
          .filter((p) => p.addedP50Ms !== null)
          .map((p) => ({ x: p.concurrency, y: p.addedP50Ms! })),
      },
      {
        name: 'added p99',
        points: c.points
          .filter((p) => p.addedP99Ms !== null)
          .map((p) => ({ x: p.concurrency, y: p.addedP99Ms! })),
      },
      {
        name: `threshold ${c.maxAddedP99Ms} ms`,
        points: [
          { x: Math.min(...c.points.map((p) => p.concurrency)), y: c.maxAddedP99Ms },
          { x: Math.max(...c.points.map((p) => p.concurrency)), y: c.maxAddedP99Ms },
        ],
      },
    ],
    'Added latency against concurrent calls',
    'concurrent calls',
    'ms',
  );
  const cpuPoints = c.points
    .filter((p) => p.cpuPercent !== null)
    .map((p) => ({ x: p.concurrency, y: p.cpuPercent! }));
  const cpu =
    cpuPoints.length === 0
      ? '<p class="empty">Server CPU not sampled (give --server-pid).</p>'
      : lineChart(
          [{ name: 'server CPU %', points: cpuPoints }],
          'Server CPU against concurrent calls',
          'concurrent calls',
          '% of one core',
        );
  return `<h2>Capacity</h2>
<p id="capacity-summary">${c.maxConcurrency} concurrent calls (${c.callsPerCore.toFixed(1)} per core), limited by ${escapeHtml(c.limit)} (added p99 threshold ${c.maxAddedP99Ms} ms)${c.memoryPerCallBytes === null ? '' : ` · ${(c.memoryPerCallBytes / 2 ** 20).toFixed(2)} MiB per call`}${c.cpuPerCallPercent === null ? '' : ` · ${c.cpuPerCallPercent.toFixed(2)} % of a core per call`}.</p>
<div class="charts">${latency}${cpu}</div>
<table id="capacity"><thead><tr><th>concurrent calls</th><th>added p50</th><th>added p99</th><th>deadline misses</th><th>failed calls</th><th>server CPU</th><th>server RSS</th><th>harness pacing late p99</th></tr></thead><tbody>
${c.points.map((p) => `<tr><td>${p.concurrency}</td><td>${ms(p.addedP50Ms)}</td><td>${ms(p.addedP99Ms)}</td><td>${p.deadlineMisses}</td><td>${p.failedCalls}</td><td>${p.cpuPercent === null ? '–' : `${p.cpuPercent.toFixed(0)} %`}</td><td>${p.rssBytes === null ? '–' : `${(p.rssBytes / 2 ** 20).toFixed(0)} MiB`}</td><td>${ms(p.pacingLateP99Ms ?? null)}</td></tr>`).join('\n')}
</tbody></table>`;
}

function distributionRow(name: string, id: string, d: Distribution | null): string {
  const cells =
    d === null
      ? ['0', '–', '–', '–', '–']
      : [String(d.count), ms(d.p50), ms(d.p95), ms(d.p99), ms(d.max)];
  return `<tr data-measure="${escapeHtml(id)}"><td>${escapeHtml(name)}</td>${cells.map((c) => `<td>${c}</td>`).join('')}</tr>`;
}

function ms(value: number | null): string {
  return value === null || !Number.isFinite(value)
    ? '–'
    : `${value.toFixed(Math.abs(value) < 10 ? 1 : 0)} ms`;
}

function rate(r: Rate): string {
  return r.of === 0 ? '–' : `${r.count}/${r.of}`;
}
