import { describe, expect, it } from 'vitest';
import { SpeechTracker } from '../../bench/harness/speech-tracker.js';
import { FRAME_MS, RATE_HZ, jitter, signal, timeline } from './synthetic-audio.js';

function trackAll(chunks: ReturnType<typeof timeline>, options = {}): SpeechTracker {
  const tracker = new SpeechTracker({ sampleRateHz: RATE_HZ, ...options });
  for (const chunk of chunks) {
    tracker.push(chunk.samples, chunk.atMs);
  }
  tracker.finish();
  return tracker;
}

describe('SpeechTracker', () => {
  it('finds tone and noise bursts at their exact offsets, within one frame', () => {
    const audio = signal(3000, [
      { fromMs: 215, toMs: 733 },
      { fromMs: 1407, toMs: 2291, kind: 'noise' },
    ]);
    const tracker = trackAll(timeline(audio, { startMs: 1000 }));
    expect(tracker.segments).toHaveLength(2);
    const [first, second] = tracker.segments;
    expect(Math.abs(first!.startMs - 1215)).toBeLessThanOrEqual(FRAME_MS);
    expect(Math.abs(first!.endMs - 1733)).toBeLessThanOrEqual(FRAME_MS);
    expect(Math.abs(second!.startMs - 2407)).toBeLessThanOrEqual(FRAME_MS);
    expect(Math.abs(second!.endMs - 3291)).toBeLessThanOrEqual(FRAME_MS);
  });

  it('bridges pauses shorter than the hangover, splits on longer ones, ignores clicks', () => {
    const audio = signal(4000, [
      { fromMs: 100, toMs: 600 },
      { fromMs: 750, toMs: 1200 }, // 150 ms pause: bridged by 250 ms hangover
      { fromMs: 1600, toMs: 1610 }, // 10 ms click: below minSpeechMs
      { fromMs: 2200, toMs: 2600 }, // after 1000 ms silence: a new segment
    ]);
    const tracker = trackAll(timeline(audio));
    expect(tracker.segments.map((s) => [Math.round(s.startMs), Math.round(s.endMs)])).toEqual([
      [100, 1200],
      [2200, 2600],
    ]);
    expect(tracker.silentGaps).toHaveLength(1);
    expect(tracker.silentGaps[0]!.endMs - tracker.silentGaps[0]!.startMs).toBeCloseTo(150, 0);
  });

  it('keeps onsets within a frame when chunks arrive with jitter', () => {
    const audio = signal(2000, [{ fromMs: 500, toMs: 1500 }]);
    const next = jitter(15);
    const tracker = trackAll(timeline(audio, { startMs: 0, delayMs: () => next() }));
    expect(tracker.segments).toHaveLength(1);
    expect(Math.abs(tracker.segments[0]!.startMs - 500)).toBeLessThanOrEqual(FRAME_MS);
    expect(tracker.holes.every((h) => h.endMs - h.startMs < FRAME_MS)).toBe(true);
  });

  it('ends a segment by the clock when the sender stops sending', () => {
    const ends: number[] = [];
    const tracker = new SpeechTracker({
      sampleRateHz: RATE_HZ,
      onSpeechEnd: (segment) => ends.push(segment.endMs),
    });
    for (const chunk of timeline(signal(400, [{ fromMs: 0, toMs: 400 }]))) {
      tracker.push(chunk.samples, chunk.atMs);
    }
    expect(tracker.speaking).toBe(true);
    tracker.advanceTo(500);
    expect(tracker.speaking).toBe(true);
    tracker.advanceTo(651);
    expect(tracker.speaking).toBe(false);
    expect(ends).toEqual([400]);
  });

  it('rejects bad options with a clear error', () => {
    expect(() => new SpeechTracker({ sampleRateHz: 0 })).toThrow(/sampleRateHz/);
    expect(() => new SpeechTracker({ sampleRateHz: RATE_HZ, hangoverMs: -1 })).toThrow(
      /hangoverMs/,
    );
  });
});
