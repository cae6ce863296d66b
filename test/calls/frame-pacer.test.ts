import { describe, expect, it } from 'vitest';
import { FramePacer } from '../../src/calls/frame-pacer.js';

describe('FramePacer', () => {
  it('runs each stream every 20 ms from its own start', () => {
    let nowMs = 0;
    const pacer = new FramePacer({ now: () => nowMs, timer: false });
    const frames = { a: [] as number[], b: [] as number[] };
    pacer.add(() => frames.a.push(nowMs));
    nowMs = 7;
    pacer.add(() => frames.b.push(nowMs));
    for (nowMs = 10; nowMs <= 70; nowMs += 10) {
      pacer.tick();
    }
    // a is due at 20, 40, 60; b at 27, 47, 67 (run at the next tick: 30, 50, 70).
    expect(frames.a).toEqual([20, 40, 60]);
    expect(frames.b).toEqual([30, 50, 70]);
  });

  it('catches up at most 5 frames after a stall, then skips ahead', () => {
    let nowMs = 0;
    const pacer = new FramePacer({ now: () => nowMs, timer: false });
    let count = 0;
    pacer.add(() => count++);
    nowMs = 200; // ten frames due
    pacer.tick();
    expect(count).toBe(5);
    nowMs = 210;
    pacer.tick();
    expect(count).toBe(5); // the clock moved on to 220
    nowMs = 220;
    pacer.tick();
    expect(count).toBe(6);
  });

  it('takes a stopped stream off the clock, also from inside a frame', () => {
    let nowMs = 0;
    const pacer = new FramePacer({ now: () => nowMs, timer: false });
    const runs = { self: 0, other: 0, victim: 0 };
    const victim = pacer.add(() => runs.victim++);
    const self = pacer.add(() => {
      runs.self++;
      self.stop();
      victim.stop();
    });
    pacer.add(() => runs.other++);
    expect(pacer.size).toBe(3);
    for (nowMs = 20; nowMs <= 100; nowMs += 20) {
      pacer.tick();
    }
    expect(runs.self).toBe(1);
    expect(runs.other).toBe(5);
    expect(runs.victim).toBe(0);
    expect(pacer.size).toBe(1);
    self.stop(); // idempotent
    expect(pacer.size).toBe(1);
  });

  it('drives streams from its own timer while any is paced', async () => {
    const pacer = new FramePacer();
    let count = 0;
    await new Promise<void>((resolve) => {
      const stream = pacer.add(() => {
        count++;
        if (count === 3) {
          stream.stop();
          resolve();
        }
      });
    });
    expect(count).toBe(3);
    expect(pacer.size).toBe(0);
  });
});
