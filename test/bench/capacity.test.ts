import { describe, expect, it } from 'vitest';
import { searchCapacity, type CapacityPoint } from '../../bench/harness/capacity.js';

/** A fake server: latency grows past `kneeCalls`; frames start missing past `missCalls`. */
function fakeServer(kneeCalls: number, missCalls: number) {
  const asked: number[] = [];
  const measure = (concurrency: number): Promise<CapacityPoint> => {
    asked.push(concurrency);
    const over = Math.max(0, concurrency - kneeCalls);
    return Promise.resolve({
      concurrency,
      addedP50Ms: 2 + over * 0.5,
      addedP99Ms: 5 + over * 2,
      deadlineMisses: concurrency > missCalls ? concurrency - missCalls : 0,
      failedCalls: 0,
      cpuPercent: 3 + concurrency * 1.5,
      rssBytes: 100e6 + concurrency * 2e6,
    });
  };
  return { asked, measure };
}

describe('searchCapacity', () => {
  it('ramps until added p99 passes the threshold, then bisects to the limit', async () => {
    // p99 = 5 + 2·(c − 40) ≤ 20 ⇔ c ≤ 47.
    const server = fakeServer(40, 10_000);
    const result = await searchCapacity({ measure: server.measure, cores: 2, refineSteps: 10 });
    expect(server.asked.slice(0, 8)).toEqual([1, 2, 4, 8, 16, 32, 64, 48]);
    expect(result.maxConcurrency).toBe(47);
    expect(result.limit).toBe('added-latency');
    expect(result.callsPerCore).toBe(23.5);
    expect(result.memoryPerCallBytes).toBeCloseTo(2e6, 0);
    expect(result.cpuPerCallPercent).toBeCloseTo(1.5, 6);
    expect(result.points.map((p) => p.concurrency)).toEqual(
      [...server.asked].sort((a, b) => a - b),
    );
  });

  it('stops at the first frame-deadline miss, whatever the latency', async () => {
    const server = fakeServer(1000, 20);
    const result = await searchCapacity({ measure: server.measure, cores: 2, refineSteps: 10 });
    expect(result.maxConcurrency).toBe(20);
    expect(result.limit).toBe('deadline-misses');
  });

  it('tolerates a given number of deadline misses per call', async () => {
    // Misses = c − 20 ≤ 0.5·c ⇔ c ≤ 40.
    const server = fakeServer(1000, 20);
    const result = await searchCapacity({
      measure: server.measure,
      cores: 2,
      refineSteps: 10,
      maxMissesPerCall: 0.5,
    });
    expect(result.maxConcurrency).toBe(40);
    expect(result.limit).toBe('deadline-misses');
    expect(result.maxMissesPerCall).toBe(0.5);
  });

  it('reports zero when the first point fails, and the cap when nothing fails', async () => {
    const failing = await searchCapacity({ measure: fakeServer(0, 0).measure, cores: 1 });
    expect(failing.maxConcurrency).toBe(0);
    expect(failing.callsPerCore).toBe(0);
    const capped = await searchCapacity({
      measure: fakeServer(1000, 1000).measure,
      cores: 4,
      maxConcurrency: 50,
    });
    expect(capped.maxConcurrency).toBe(50);
    expect(capped.limit).toBe('max-concurrency');
    expect(capped.points.map((p) => p.concurrency)).toEqual([1, 2, 4, 8, 16, 32, 50]);
  });
});
