/**
 * `npm run bench -- sip-load` end to end, very short: a Parla of its own on the vendor
 * simulators, SIPp placing 2 calls a second for 10 s (4 s calls), one probe call on top. Checks
 * that the calls connected and every figure was produced; no timing is asserted.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SIP_LOAD_FORMAT, type SipLoadResult } from '../../bench/harness/sip-load-result.js';
import { hasSipp } from '../support/sipp.js';

const dir = mkdtempSync(join(tmpdir(), 'parla-sip-load-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runBench(args: readonly string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'bench/run.ts', 'sip-load', ...args],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe.skipIf(!hasSipp)('npm run bench -- sip-load', () => {
  it(
    'places the SIPp calls and a probe and writes every figure',
    { timeout: 300_000 },
    async () => {
      const out = join(dir, 'result.json');
      const { code, output } = await runBench([
        '--rate',
        '2',
        '--call-seconds',
        '4',
        '--duration',
        '10',
        '--probes',
        '1',
        '--scripts',
        'opening-hours',
        '--out',
        out,
      ]);
      // Exit code 1 means a failed call: the output says which.
      expect(code, output).toBe(0);
      const result = JSON.parse(readFileSync(out, 'utf8')) as SipLoadResult;
      expect(result.format).toBe(SIP_LOAD_FORMAT);
      expect(output).toContain('calls per core');

      const counters = result.sipp.counters!;
      expect(counters.created).toBe(20);
      expect(counters.successful).toBe(20);
      expect(counters.failed).toBe(0);
      expect(result.sipp.inviteToOkMs?.count).toBe(20);

      // Every SIPp call reached the pipeline: stored, ended by SIPp's BYE.
      const stored = result.sippCallsStored!;
      expect(stored.ended).toBe(20);
      expect(stored.endedReasons).toEqual({ 'customer-ended-call': 20 });

      expect(result.window.meanSippCalls).toBeGreaterThan(0);
      expect(result.window.parla?.cpuPercent).toBeGreaterThan(0);
      expect(result.window.cpuPerCallPercent).toBeGreaterThan(0);
      expect(result.window.callsPerCore).toBeGreaterThan(0);

      const probes = result.probes!;
      expect(probes.summary.calls).toBe(1);
      expect(probes.summary.failedCalls).toBe(0);
      expect(probes.summary.voiceToVoiceMs?.count).toBeGreaterThan(0);
      expect(probes.rtp).toHaveLength(1);
      const rtp = probes.rtp[0]!;
      // Parla paces its RTP every 20 ms for the whole call, so a call of seconds has hundreds.
      expect(rtp.packets).toBeGreaterThan(100);
      expect(rtp.gapP50Ms).not.toBeNull();
      expect(Number.isFinite(rtp.jitterMs)).toBe(true);
    },
  );
});
