import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { describeMachine, parseProcStat, ProcessSampler } from '../../bench/harness/machine.js';

describe('machine description and process sampling', () => {
  it('describes the machine a result was measured on', () => {
    const machine = describeMachine(new Date('2026-11-22T07:00:00Z'));
    expect(machine.cores).toBeGreaterThan(0);
    expect(machine.cpuModel).not.toBe('');
    expect(machine.nodeVersion).toBe(process.version);
    expect(machine.date).toBe('2026-11-22T07:00:00.000Z');
  });

  it('reads CPU ticks and RSS from a /proc stat line, whatever the command name holds', () => {
    const line =
      '4242 (node worker (1)) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 75 0 0 20 0 11 0 100 ' +
      '1234567 5000 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0';
    expect(parseProcStat(line)).toEqual({ ticks: 325, rssBytes: 5000 * 4096 });
    expect(() => parseProcStat('garbage')).toThrow(/unreadable/);
  });

  it.skipIf(!existsSync('/proc/self/stat'))('samples a live process', async () => {
    const sampler = new ProcessSampler(process.pid);
    await sampler.start(10);
    let x = 0;
    for (let i = 0; i < 2e6; i++) {
      x += Math.sqrt(i);
    }
    const usage = await sampler.stop();
    expect(x).toBeGreaterThan(0);
    expect(usage.cpuPercent).toBeGreaterThanOrEqual(0);
    expect(usage.peakRssBytes).toBeGreaterThan(10 * 2 ** 20);
    await expect(new ProcessSampler(2 ** 22 + 7).start()).rejects.toThrow();
  });
});
