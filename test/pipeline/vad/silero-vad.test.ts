import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWav } from '../../../src/media/codecs/wav.js';
import { levelDbfs } from '../../../src/pipeline/vad/energy-vad.js';
import { SileroModel } from '../../../src/pipeline/vad/silero-model.js';
import {
  scoreSileroWindows,
  SileroBatchBuffers,
  SileroVad,
  type SileroVadOptions,
} from '../../../src/pipeline/vad/silero-vad.js';
import { type VadEvent, VadStateMachine } from '../../../src/pipeline/vad/vad-state-machine.js';

const FIXTURE = new URL('../../fixtures/denoise/clean-speech-16k.wav', import.meta.url);
const speech = readWav(readFileSync(FIXTURE));

interface Scored {
  probability: number;
  startMs: number;
  endMs: number;
  inferred: boolean;
}

interface Stream {
  vad: SileroVad;
  scores: Scored[];
  audio: Int16Array;
}

function stream(audio: Int16Array, options: Partial<SileroVadOptions> = {}): Stream {
  const scores: Scored[] = [];
  const vad = new SileroVad({
    sampleRateHz: 16000,
    ...options,
    onWindow: (probability, startMs, endMs, inferred) =>
      scores.push({ probability, startMs, endMs, inferred }),
  });
  return { vad, scores, audio };
}

/** Feeds the streams frame by frame (like a media tick) and scores all of them together. */
async function runTogether(model: SileroModel, streams: Stream[], frameMs: 10 | 20 = 20) {
  const buffers = new SileroBatchBuffers();
  const longest = Math.max(...streams.map((s) => s.audio.length));
  for (let tick = 0; ; tick++) {
    let fed = false;
    for (const s of streams) {
      const rate = s.vad.sampleRateHz;
      const size = (rate * frameMs) / 1000;
      const start = tick * size;
      if (start + size <= s.audio.length) {
        s.vad.pushFrame(s.audio.subarray(start, start + size), tick * frameMs);
        fed = true;
      }
    }
    await scoreSileroWindows(
      model,
      streams.map((s) => s.vad),
      buffers,
    );
    if (!fed || tick * 16000 > longest * 1000) {
      return;
    }
  }
}

function whiteNoise(length: number, dbfs: number, seed: number): Int16Array {
  let s = seed >>> 0;
  const amplitude = 32768 * 10 ** (dbfs / 20) * Math.sqrt(3);
  const out = new Int16Array(length);
  for (let i = 0; i < length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = Math.round(amplitude * (s / 2 ** 31 - 1));
  }
  return out;
}

/** First and last 10 ms frame of the clean file above −50 dBFS (its pauses are digital silence). */
function speechBoundariesMs(audio: Int16Array, rateHz: number): { startMs: number; endMs: number } {
  const size = rateHz / 100;
  let first = -1;
  let last = -1;
  for (let f = 0; (f + 1) * size <= audio.length; f++) {
    if (levelDbfs(audio.subarray(f * size, (f + 1) * size)) > -50) {
      first = first < 0 ? f : first;
      last = f;
    }
  }
  return { startMs: first * 10, endMs: (last + 1) * 10 };
}

let model: SileroModel;

beforeAll(async () => {
  model = await SileroModel.create();
});

afterAll(async () => {
  await model.release();
});

describe('Silero VAD on real speech', () => {
  const { startMs, endMs } = speechBoundariesMs(speech.samples, speech.sampleRateHz);

  it('finds sensible boundaries in the fixture', () => {
    expect(speech.sampleRateHz).toBe(16000);
    expect(startMs).toBeGreaterThanOrEqual(250);
    expect(startMs).toBeLessThanOrEqual(350);
    expect(endMs).toBeGreaterThanOrEqual(6600);
    expect(endMs).toBeLessThanOrEqual(6750);
  });

  for (const frameMs of [10, 20] as const) {
    it(`scores speech high, the silence around it low, and detects start/stop (${frameMs} ms frames)`, async () => {
      // One more second of silence, so that the stop can be confirmed as in a running call.
      const audio = new Int16Array(speech.samples.length + 16000);
      audio.set(speech.samples);
      const s = stream(audio);
      await runTogether(model, [s], frameMs);
      const windows = s.scores;
      expect(windows.length).toBe(Math.floor(audio.length / 512));
      const inside = windows.filter((w) => w.startMs >= startMs + 100 && w.endMs <= endMs - 100);
      const outside = windows.filter((w) => w.endMs <= startMs || w.startMs >= endMs + 100);
      const meanInside = inside.reduce((sum, w) => sum + w.probability, 0) / inside.length;
      expect(meanInside).toBeGreaterThan(0.85);
      expect(inside.filter((w) => w.probability >= 0.5).length / inside.length).toBeGreaterThan(
        0.85,
      );
      expect(Math.max(...outside.map((w) => w.probability))).toBeLessThan(0.2);
      // The leading silence is digital zeros: the energy gate skips those windows.
      expect(windows[0]!.inferred).toBe(false);

      const machine = new VadStateMachine({ startMs: 96, stopMs: 500 });
      const events: VadEvent[] = [];
      for (const w of windows) {
        const event = machine.update(w.probability, w.startMs, w.endMs);
        if (event !== null) {
          events.push({ ...event });
        }
      }
      expect(events.map((e) => e.type)).toEqual(['speech-start', 'speech-stop']);
      expect(Math.abs(events[0]!.atMs - startMs)).toBeLessThanOrEqual(100);
      expect(Math.abs(events[1]!.atMs - endMs)).toBeLessThanOrEqual(100);
    });
  }

  it('scores zeros and low white noise low, without the gate', async () => {
    const zeros = stream(new Int16Array(16000 * 2), { gate: false });
    const noise = stream(whiteNoise(16000 * 2, -50, 11), { gate: false });
    await runTogether(model, [zeros, noise]);
    expect(Math.max(...zeros.scores.map((w) => w.probability))).toBeLessThan(0.1);
    expect(Math.max(...noise.scores.map((w) => w.probability))).toBeLessThan(0.2);
    expect(zeros.scores.every((w) => w.inferred)).toBe(true);
  });

  it('skips inference on silence with the gate, and scores 0 there', async () => {
    const gated = stream(new Int16Array(16000));
    await runTogether(model, [gated]);
    expect(gated.scores.length).toBe(31);
    expect(gated.scores.every((w) => !w.inferred && w.probability === 0)).toBe(true);
  });

  it('runs at 8 kHz', async () => {
    // 2:1 decimation after a two-tap average: crude, but enough to keep speech recognisable.
    const s16 = speech.samples;
    const s8 = new Int16Array(Math.floor(s16.length / 2));
    for (let i = 0; i < s8.length; i++) {
      s8[i] = Math.round((s16[2 * i]! + s16[2 * i + 1]!) / 2);
    }
    const s = stream(s8, { sampleRateHz: 8000 });
    await runTogether(model, [s]);
    expect(s.scores[0]!.endMs - s.scores[0]!.startMs).toBe(32);
    const inside = s.scores.filter((w) => w.startMs >= startMs + 100 && w.endMs <= endMs - 100);
    const mean = inside.reduce((sum, w) => sum + w.probability, 0) / inside.length;
    expect(mean).toBeGreaterThan(0.7);
  });
});

describe('batching', () => {
  function offsetSpeech(leadMs: number): Int16Array {
    const out = new Int16Array(speech.samples.length + leadMs * 16);
    out.set(speech.samples, leadMs * 16);
    return out;
  }

  it('gives the same scores batched as one call at a time, and keeps states apart', async () => {
    const make = () => [
      stream(speech.samples, { gate: false }),
      stream(offsetSpeech(700), { gate: false }),
      stream(whiteNoise(speech.samples.length, -45, 5), { gate: false }),
      stream(offsetSpeech(1500)),
    ];
    const alone = make();
    for (const s of alone) {
      await runTogether(model, [s]);
    }
    const batched = make();
    await runTogether(model, batched);
    for (let c = 0; c < alone.length; c++) {
      const a = alone[c]!.scores;
      const b = batched[c]!.scores;
      expect(b.length).toBe(a.length);
      let maxDiff = 0;
      for (let i = 0; i < a.length; i++) {
        maxDiff = Math.max(maxDiff, Math.abs(a[i]!.probability - b[i]!.probability));
        expect(b[i]!.startMs).toBe(a[i]!.startMs);
      }
      expect(maxDiff).toBeLessThan(1e-4);
      for (let k = 0; k < 256; k++) {
        expect(Math.abs(batched[c]!.vad.state[k]! - alone[c]!.vad.state[k]!)).toBeLessThan(1e-4);
      }
    }
    // The noise call sat in a batch next to speech and still scored as noise.
    expect(Math.max(...batched[2]!.scores.map((w) => w.probability))).toBeLessThan(0.2);
  });

  it('batches directly through runBatch with the [2, batch, 128] state layout', async () => {
    const rows = 3;
    const inputs = new Float32Array(rows * 576);
    for (let i = 0; i < 576; i++) {
      inputs[576 + i] = speech.samples[8000 + i]! / 32768; // row 1: speech, rows 0 and 2: zeros
    }
    const states = new Float32Array(rows * 256);
    const probabilities = new Float32Array(rows);
    await model.runBatch(16000, inputs, states, rows, probabilities);
    const single = new Float32Array(1);
    const singleState = new Float32Array(256);
    await model.runBatch(16000, inputs.subarray(576, 1152), singleState, 1, single);
    expect(Math.abs(probabilities[1]! - single[0]!)).toBeLessThan(1e-4);
    expect(Math.abs(probabilities[0]! - probabilities[2]!)).toBeLessThan(1e-6);
    // Row 1's state is at [0, 1, :] and [1, 1, :].
    for (let k = 0; k < 128; k++) {
      expect(Math.abs(states[128 + k]! - singleState[k]!)).toBeLessThan(1e-4);
      expect(Math.abs(states[(rows + 1) * 128 + k]! - singleState[128 + k]!)).toBeLessThan(1e-4);
    }
  });

  it('shares one model per thread', async () => {
    const [a, b] = await Promise.all([SileroModel.shared(), SileroModel.shared()]);
    expect(a).toBe(b);
  });
});
