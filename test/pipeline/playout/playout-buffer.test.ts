import { describe, expect, it } from 'vitest';
import { PlayoutBuffer } from '../../../src/pipeline/playout/playout-buffer.js';
import { spokenPrefix } from '../../../src/pipeline/interruption/spoken-prefix.js';

function ramp(length: number, from = 1): Int16Array {
  return Int16Array.from({ length }, (_, i) => from + i);
}

describe('PlayoutBuffer', () => {
  it('hands out 20 ms frames in order and pads the last one with silence', () => {
    const playout = new PlayoutBuffer(8000);
    expect(playout.frameSamples).toBe(160);
    playout.write(ramp(200));
    const frame = new Int16Array(160);
    expect(playout.pullFrame(frame)).toBe(160);
    expect(frame[0]).toBe(1);
    expect(frame[159]).toBe(160);
    expect(playout.pullFrame(frame)).toBe(40);
    expect(frame[39]).toBe(200);
    expect(frame[40]).toBe(0);
    expect(playout.pullFrame(frame)).toBe(0);
  });

  it('counts played characters per text chunk, in proportion inside a chunk', () => {
    const playout = new PlayoutBuffer(8000);
    const text = 'Hello there. How can I help you today?';
    playout.startMessage();
    playout.beginSegment(13); // "Hello there. "
    playout.write(ramp(800));
    playout.endSegment();
    playout.beginSegment(text.length - 13);
    playout.write(ramp(1000));
    playout.endSegment();
    const frame = new Int16Array(160);
    for (let i = 0; i < 5; i += 1) {
      playout.pullFrame(frame);
    }
    expect(playout.playedChars).toBe(13);
    for (let i = 0; i < 3; i += 1) {
      playout.pullFrame(frame); // 480 of the second chunk's 1000 samples
    }
    expect(playout.playedChars).toBe(13 + Math.floor((25 * 480) / 1000));
  });

  it('stops within the frame on barge-in and reports what was heard', () => {
    const playout = new PlayoutBuffer(16000);
    const text = 'I can book that for you on Monday morning.';
    playout.startMessage();
    playout.beginSegment(text.length);
    playout.write(ramp(16000));
    const frame = new Int16Array(320);
    for (let i = 0; i < 25; i += 1) {
      playout.pullFrame(frame); // half a second of one second
    }
    const heard = playout.clear();
    expect(heard).toBe(Math.floor(text.length / 2));
    expect(playout.pullFrame(frame)).toBe(0);
    expect(frame.every((s) => s === 0)).toBe(true);
    expect(spokenPrefix(text, heard)).toBe('I can book that for');
  });

  it('keeps working after many chunks have played', () => {
    const playout = new PlayoutBuffer(8000);
    const frame = new Int16Array(160);
    playout.startMessage();
    for (let chunk = 0; chunk < 1000; chunk += 1) {
      playout.beginSegment(10);
      playout.write(ramp(160));
      playout.endSegment();
      playout.pullFrame(frame);
    }
    expect(playout.playedChars).toBe(10_000);
    expect(playout.freeSamples).toBeGreaterThan(0);
  });

  it('refuses bad settings and overflow', () => {
    expect(() => new PlayoutBuffer(7999)).toThrow(RangeError);
    expect(() => new PlayoutBuffer(8000, 30)).toThrow(RangeError);
    const small = new PlayoutBuffer(8000, 20, 0.1);
    expect(() => small.write(new Int16Array(801))).toThrow(RangeError);
  });
});
