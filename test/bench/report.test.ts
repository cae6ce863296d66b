import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchCapacity } from '../../bench/harness/capacity.js';
import { VirtualClock } from '../../bench/harness/clock.js';
import { compareResults, compareText } from '../../bench/harness/compare.js';
import { fakeTransportFactory } from '../../bench/harness/fake-transport.js';
import { renderHtmlReport } from '../../bench/harness/html-report.js';
import { describeMachine } from '../../bench/harness/machine.js';
import {
  RESULT_FORMAT,
  readResult,
  summarize,
  type BenchResult,
} from '../../bench/harness/result-file.js';
import { runCalls } from '../../bench/harness/runner.js';
import { loadScript } from '../../bench/harness/script.js';
import { summaryText } from '../../bench/harness/text-output.js';

const CHROMIUM = ['chromium', 'chromium-browser'].find(
  (name) => spawnSync(name, ['--version'], { stdio: 'ignore' }).status === 0,
);
if (CHROMIUM === undefined && process.env.CI === 'true') {
  throw new Error('chromium is not installed: CI must check the HTML report (.ci/run installs it)');
}
if (CHROMIUM === undefined) {
  console.warn(
    'SKIPPED: chromium is not installed (apt-get install -y chromium): the HTML report is not ' +
      'checked in a browser',
  );
}
const FIXTURES = 'bench/fixtures/callers';
let dir: string;
let result: BenchResult;

/** A result from three fake calls playing the committed scripts, plus a capacity search. */
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'parla-bench-report-'));
  const clock = new VirtualClock();
  const scripts = await Promise.all(
    ['booking', 'order-status', 'opening-hours'].map((name) =>
      loadScript(`${FIXTURES}/${name}.script.json`, 16_000),
    ),
  );
  const run = await clock.runUntil(
    runCalls({
      clock,
      transport: fakeTransportFactory({
        clock,
        latencyMs: 800,
        endOfTurnSilenceMs: 500,
        replyMs: 5000,
        bargeInAfterMs: 700,
        firstMessageAfterMs: 300,
        sendStages: true,
      }),
      scripts,
      calls: 3,
      measure: { expectedLatencyMs: 750 },
    }),
    300_000,
  );
  const capacity = await searchCapacity({
    cores: 2,
    maxConcurrency: 64,
    measure: (concurrency) =>
      Promise.resolve({
        concurrency,
        addedP50Ms: 3 + concurrency / 10,
        addedP99Ms: 8 + concurrency / 3,
        deadlineMisses: 0,
        failedCalls: 0,
        cpuPercent: 2 + concurrency * 1.2,
        rssBytes: 90e6 + concurrency * 3e6,
      }),
  });
  result = {
    format: RESULT_FORMAT,
    label: 'report <test> & "quotes"',
    machine: describeMachine(),
    target: { transport: 'fake', url: null, assistantId: null },
    settings: {
      calls: 3,
      turnsPerCall: null,
      scripts: scripts.map((s) => s.name),
      expectedLatencyMs: 750,
    },
    summary: summarize(run.calls),
    pacing: run.pacing,
    harnessCpuPercent: 1,
    server: null,
    durationMs: run.durationMs,
    calls: run.calls,
    capacity,
  };
}, 120_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('result, summary and compare', () => {
  it('measures the fake through the committed fixtures and scripts', () => {
    const s = result.summary;
    expect(s.failedCalls).toBe(0);
    expect(s.turns).toBe(4 + 5 + 3);
    expect(s.voiceToVoiceMs!.count).toBeGreaterThanOrEqual(5);
    // The fake answers 800 ms after the caller's last loud sample; the speech detector's end is
    // within a frame of that sample (espeak trails off below the fake's threshold).
    expect(Math.abs(s.voiceToVoiceMs!.p50 - 800)).toBeLessThanOrEqual(20);
    expect(Math.abs(s.addedMs!.p50 - 50)).toBeLessThanOrEqual(20);
    // The fake stops once it has heard 700 ms of speech; its audio stops within the frame after
    // its `clear` message.
    const interruptions = result.calls.flatMap((c) => c.turns).filter((t) => t.clearMs !== null);
    expect(interruptions.length).toBeGreaterThanOrEqual(2);
    for (const turn of interruptions) {
      expect(turn.clearMs!).toBeGreaterThanOrEqual(700);
      expect(turn.bargeInStopMs! - turn.clearMs!).toBeGreaterThanOrEqual(0);
      expect(turn.bargeInStopMs! - turn.clearMs!).toBeLessThanOrEqual(20);
    }
    expect(s.stagesMs.endpointingMs!.p50).toBe(500);
    expect(summaryText(result)).toContain('voice-to-voice');
  });

  it('compares two results with ratios, and refuses files that are not results', async () => {
    const slower: BenchResult = structuredClone(result);
    slower.summary.voiceToVoiceMs = {
      ...result.summary.voiceToVoiceMs!,
      p50: result.summary.voiceToVoiceMs!.p50 * 1.5,
    };
    const row = compareResults(result, slower).find(
      (r) => r.measure === 'voice-to-voice p50 (ms)',
    )!;
    expect(row.ratio).toBeCloseTo(1.5, 9);
    expect(compareText(result, slower, ['a.json', 'b.json'])).toMatch(
      /voice-to-voice p50 \(ms\).*1\.50×/,
    );
    const path = join(dir, 'not-a-result.json');
    writeFileSync(path, JSON.stringify({ hello: 1 }));
    await expect(readResult(path)).rejects.toMatchObject({ code: 'ERR_BENCH_RESULT' });
    const good = join(dir, 'result.json');
    writeFileSync(good, JSON.stringify(result));
    expect((await readResult(good)).summary.turns).toBe(result.summary.turns);
  });
});

describe('HTML report', () => {
  it('is self-contained and escapes text', () => {
    const html = renderHtmlReport(result);
    expect(html).not.toMatch(/<(link|img)\b|src=|href="http/);
    expect(html).toContain('report &lt;test&gt; &amp; &quot;quotes&quot;');
  });

  it.skipIf(CHROMIUM === undefined)(
    'renders in headless Chromium with its charts and numbers',
    () => {
      const html = renderHtmlReport(result);
      const path = join(dir, 'report.html');
      writeFileSync(path, html);
      const dom = execFileSync(
        CHROMIUM!,
        [
          '--headless',
          '--disable-gpu',
          '--no-sandbox',
          `--user-data-dir=${join(dir, 'profile')}`,
          '--dump-dom',
          `file://${path}`,
        ],
        { encoding: 'utf8', timeout: 90_000, stdio: ['ignore', 'pipe', 'ignore'] },
      );
      const charts = html.match(/<svg class="chart"/g)!.length;
      expect(charts).toBeGreaterThanOrEqual(6);
      // The page's script counted the charts Chromium laid out with a non-empty box.
      expect(dom).toContain(`data-charts-drawn="${charts}"`);
      const v2v = result.summary.voiceToVoiceMs!;
      const row = dom.match(/<tr data-measure="v2v">(.*?)<\/tr>/)![1]!;
      expect(row).toContain(`<td>${v2v.count}</td><td>${v2v.p50.toFixed(0)} ms</td>`);
      expect(dom).toContain(`${result.capacity!.maxConcurrency} concurrent calls (`);
      expect(dom).toContain('Per-stage timings per turn');
    },
  );
});
