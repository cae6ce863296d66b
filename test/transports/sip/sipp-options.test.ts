import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasSipp, runSipp } from '../../support/sipp.js';
import { TestUas } from './support/test-uas.js';

const SCENARIOS = fileURLToPath(new URL('../../fixtures/sip/sipp/', import.meta.url));

/**
 * Runs a SIPp scenario against 127.0.0.1:port (one call unless `calls` says more, at `rate`
 * calls per second); resolves with its exit code: 0 only when every call succeeded.
 */
function runScenario(
  scenario: string,
  port: number,
  transport: 'u1' | 't1',
  workDir: string,
  load: { calls: number; rate: number } = { calls: 1, rate: 10 },
) {
  const args = [
    ...['-sf', join(SCENARIOS, scenario), '-i', '127.0.0.1', '-mi', '127.0.0.1', '-t', transport],
    ...['-m', String(load.calls), '-r', String(load.rate), '-l', String(load.calls)],
    ...['-nostdin', '-timeout', '20s', '-timeout_error', '-recv_timeout', '10s', '-trace_err'],
    `127.0.0.1:${port}`,
  ];
  return runSipp(args, workDir);
}

describe.skipIf(!hasSipp)('SIPp against the SIP layers', () => {
  let uas: TestUas;
  let workDir: string;

  beforeAll(async () => {
    uas = await TestUas.start();
    workDir = mkdtempSync(join(tmpdir(), 'parla-sipp-'));
  });

  afterAll(async () => {
    await uas.close();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('answers OPTIONS over UDP with 200', async () => {
    const result = await runScenario('options.xml', uas.udp.port, 'u1', workDir);
    expect(result.code, result.output).toBe(0);
    expect(uas.log).toContain('UDP OPTIONS');
  });

  it('answers OPTIONS over TCP with 200', async () => {
    const result = await runScenario('options.xml', uas.tcp.port, 't1', workDir);
    expect(result.code, result.output).toBe(0);
    expect(uas.log).toContain('TCP OPTIONS');
  });

  it('rejects an INVITE with 486 Busy Here and absorbs the ACK in the transaction', async () => {
    const before = uas.log.length;
    const result = await runScenario('invite-busy.xml', uas.udp.port, 'u1', workDir);
    expect(result.code, result.output).toBe(0);
    expect(uas.log.slice(before)).toEqual(['UDP INVITE']);
  });

  it('cancels a ringing INVITE: 200 for the CANCEL, 487 for the INVITE, ACK absorbed', async () => {
    const before = uas.log.length;
    const result = await runScenario('invite-cancel.xml', uas.udp.port, 'u1', workDir);
    expect(result.code, result.output).toBe(0);
    expect(uas.log.slice(before)).toEqual(['UDP INVITE']);
    expect(uas.udp.stats.parseErrors).toBe(0);
  });

  it('carries 100 calls started at 100 calls/s without a failed call', async () => {
    const before = uas.log.length;
    const result = await runScenario('invite-call.xml', uas.udp.port, 'u1', workDir, {
      calls: 100,
      rate: 100,
    });
    expect(result.code, result.output).toBe(0);
    const log = uas.log.slice(before);
    expect(log.filter((line) => line === 'UDP INVITE')).toHaveLength(100);
    expect(log.filter((line) => line === 'UDP BYE')).toHaveLength(100);
  });

  for (const [transport, mode] of [
    ['UDP', 'u1'],
    ['TCP', 't1'],
  ] as const) {
    it(`completes INVITE → 180 → 200 (SDP answer) → ACK → BYE over ${transport}`, async () => {
      const before = uas.log.length;
      const port = transport === 'UDP' ? uas.udp.port : uas.tcp.port;
      const result = await runScenario('invite-call.xml', port, mode, workDir);
      expect(result.code, result.output).toBe(0);
      expect(uas.log.slice(before)).toEqual([
        `${transport} INVITE`,
        'negotiated PCMA',
        'ACK 1',
        `${transport} BYE`,
      ]);
    });
  }
});
