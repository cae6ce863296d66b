import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { MediaClock } from '../../src/workers/media-clock.js';

const clocks: MediaClock[] = [];
afterEach(() => {
  for (const clock of clocks.splice(0)) {
    clock.stop();
  }
});

describe('MediaClock', () => {
  it('ticks every participant once per 20 ms period without drifting', async () => {
    const clock = new MediaClock();
    clocks.push(clock);
    const ticksA: number[] = [];
    const ticksB: number[] = [];
    const startMs = performance.now();
    clock.add({ tick: (nowMs) => ticksA.push(nowMs) });
    clock.add({ tick: (nowMs) => ticksB.push(nowMs) });
    await new Promise((resolve) => setTimeout(resolve, 505));
    clock.stop();
    // 500 ms / 20 ms = 25 ticks; drift correction keeps the count from falling behind.
    expect(ticksA.length).toBeGreaterThanOrEqual(23);
    expect(ticksA.length).toBeLessThanOrEqual(26);
    expect(ticksB).toEqual(ticksA);
    const lastTickMs = ticksA.at(-1) ?? 0;
    expect(lastTickMs - startMs - ticksA.length * 20).toBeLessThan(10);
    expect(clock.stats().ticks).toBe(ticksA.length);
  });

  it('counts late ticks and skips missed deadlines instead of bursting', async () => {
    const clock = new MediaClock();
    clocks.push(clock);
    let ticks = 0;
    clock.add({
      tick: () => {
        ticks += 1;
        if (ticks === 2) {
          const until = performance.now() + 75;
          while (performance.now() < until) {
            // block the loop for ~3.75 frames
          }
        }
      },
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    clock.stop();
    const stats = clock.stats();
    expect(stats.lateTicks).toBeGreaterThanOrEqual(1);
    expect(stats.missedDeadlines).toBeGreaterThanOrEqual(2);
    expect(stats.maxLateMs).toBeGreaterThan(40);
    expect(stats.ticks).toBeLessThanOrEqual(8);
  });

  it('runs hooks once per tick after every participant, and survives a hook that throws', async () => {
    const clock = new MediaClock();
    clocks.push(clock);
    const order: string[] = [];
    const errors: unknown[] = [];
    clock.onHookError = (error) => errors.push(error);
    const hook = (): void => {
      order.push('hook');
    };
    clock.addHook(hook);
    clock.addHook(hook);
    clock.addHook(() => {
      throw new Error('hook broke');
    });
    clock.add({ tick: () => order.push('a') });
    const leaver = { tick: (): void => void order.push('b') };
    clock.add({
      tick: () => {
        order.push('remover');
        clock.remove(leaver);
      },
    });
    clock.add(leaver);
    await new Promise((resolve) => setTimeout(resolve, 110));
    clock.stop();
    const ticks = clock.stats().ticks;
    expect(ticks).toBeGreaterThanOrEqual(3);
    // A participant removed during a tick by an earlier one does not tick.
    expect(order.slice(0, 6)).toEqual(['a', 'remover', 'hook', 'a', 'remover', 'hook']);
    expect(order.filter((entry) => entry === 'hook')).toHaveLength(ticks);
    expect(errors).toHaveLength(ticks);
    clock.removeHook(hook);
  });

  it('stops its timer when the last participant leaves', () => {
    const clock = new MediaClock();
    clocks.push(clock);
    const participant = { tick: (): void => {} };
    clock.add(participant);
    expect(clock.size).toBe(1);
    clock.remove(participant);
    expect(clock.size).toBe(0);
  });
});
