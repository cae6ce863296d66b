import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWav } from '../../src/media/codecs/wav.js';
import { Resampler } from '../../src/media/resample/resampler.js';
import type { CallerVadFactory } from '../../src/pipeline/vad/caller-vad.js';
import { SileroModel } from '../../src/pipeline/vad/silero-model.js';
import { createSileroCallerVad, SileroScheduler } from '../../src/pipeline/vad/silero-scheduler.js';
import { VadStateMachine, type VadEvent } from '../../src/pipeline/vad/vad-state-machine.js';

const FIXTURE = new URL('../fixtures/denoise/clean-speech-16k.wav', import.meta.url);
const speech = readWav(readFileSync(FIXTURE)).samples;

interface Decision {
  probability: number;
  startMs: number;
  endMs: number;
}

let model: SileroModel;
beforeAll(async () => {
  model = await SileroModel.create();
});
afterAll(async () => {
  await model.release();
});

function resample(audio: Int16Array, fromHz: number, toHz: number): Int16Array {
  const resampler = new Resampler({ inputRateHz: fromHz, outputRateHz: toHz });
  const out = new Int16Array(resampler.outputLengthFor(audio.length));
  resampler.process(audio, out);
  return out;
}

interface Call {
  rateHz: number;
  audio: Int16Array;
  decisions: Decision[];
}

/** Streams every call's audio in 20 ms frames; one scheduler flush per tick, awaited like a clock. */
async function runTicks(
  factory: CallerVadFactory,
  scheduler: SileroScheduler,
  calls: Call[],
): Promise<void> {
  const vads = calls.map((call) =>
    factory(call.rateHz, (probability, startMs, endMs) =>
      call.decisions.push({ probability, startMs, endMs }),
    ),
  );
  const ticks = Math.max(
    ...calls.map((call) => Math.floor(call.audio.length / (call.rateHz / 50))),
  );
  for (let tick = 0; tick < ticks; tick++) {
    calls.forEach((call, i) => {
      const size = call.rateHz / 50;
      if ((tick + 1) * size <= call.audio.length) {
        vads[i]!.push(call.audio.subarray(tick * size, (tick + 1) * size), tick * 20);
      }
    });
    scheduler.flush();
    await scheduler.idle();
  }
  scheduler.flush();
  await scheduler.idle();
  for (const vad of vads) {
    vad.close();
  }
}

describe('SileroScheduler', () => {
  it.each([16000, 8000, 48000, 22050])(
    'delivers one decision per 32 ms window, in order, with contiguous spans (%i Hz input)',
    async (rateHz) => {
      const scheduler = new SileroScheduler({ model });
      const call: Call = { rateHz, audio: resample(speech, 16000, rateHz), decisions: [] };
      await runTicks(createSileroCallerVad(scheduler), scheduler, [call]);
      const vadRateHz = rateHz === 8000 ? 8000 : 16000;
      const windowSamples = vadRateHz === 8000 ? 256 : 512;
      // The silent start of a window is reported early (0 for [window start, frame end)), then
      // the whole window; a call's whole windows are contiguous, every one decided once.
      const windows = call.decisions.filter((d) => d.endMs - d.startMs > 32 - 1e-6);
      const partials = call.decisions.filter((d) => d.endMs - d.startMs <= 32 - 1e-6);
      expect(partials.length).toBeGreaterThan(0);
      for (const partial of partials) {
        expect(partial.probability).toBe(0);
        const whole = windows.find((w) => Math.abs(w.startMs - partial.startMs) < 1e-6);
        const last = call.decisions.at(-1)!;
        expect(whole !== undefined || partial.startMs >= last.startMs).toBe(true);
      }
      const streamSamples = Math.floor((call.audio.length * vadRateHz) / rateHz);
      expect(Math.abs(windows.length - Math.floor(streamSamples / windowSamples))).toBe(0);
      const delayMs =
        rateHz === vadRateHz
          ? 0
          : new Resampler({ inputRateHz: rateHz, outputRateHz: vadRateHz }).groupDelayMs;
      expect(windows[0]?.startMs).toBeCloseTo(-delayMs, 6);
      for (const [i, decision] of windows.entries()) {
        expect(decision.endMs - decision.startMs).toBeCloseTo(32, 6);
        if (i > 0) {
          expect(decision.startMs).toBeCloseTo(windows[i - 1]!.endMs, 6);
        }
      }
      // Real scores: the fixture has speech and digital-silence pauses.
      const probabilities = windows.map((d) => d.probability);
      expect(Math.max(...probabilities)).toBeGreaterThan(0.9);
      expect(Math.min(...probabilities)).toBeLessThan(0.1);
      expect(scheduler.stats().windowsInferred).toBeGreaterThan(0);
      expect(scheduler.size).toBe(0);
    },
  );

  it('ends speech at the 20 ms frame where the 500 ms hold runs out, not at a window end', async () => {
    const scheduler = new SileroScheduler({ model });
    const states = new VadStateMachine({ startMs: 96, stopMs: 500 });
    const stops: VadEvent[] = [];
    const vad = createSileroCallerVad(scheduler)(16000, (probability, startMs, endMs) => {
      const event = states.update(probability, startMs, endMs);
      if (event?.type === 'speech-stop') {
        stops.push({ ...event });
      }
    });
    // "Thanks for calling." (0.3–1.5 s of the fixture), then digital silence.
    const audio = new Int16Array(48_000);
    audio.set(speech.subarray(0, 1.7 * 16000));
    for (let frame = 0; frame * 320 < audio.length; frame++) {
      vad.push(audio.subarray(frame * 320, (frame + 1) * 320), frame * 20);
      scheduler.flush();
      await scheduler.idle();
    }
    vad.close();
    expect(stops).toHaveLength(1);
    const { atMs, decidedAtMs } = stops[0]!;
    // atMs is a window start (a multiple of 32 ms); the decision comes at the end of the first
    // frame that reaches atMs + 500 (a window end would be atMs + 512).
    expect(atMs % 32).toBe(0);
    expect(decidedAtMs % 20).toBe(0);
    expect(decidedAtMs - atMs).toBeGreaterThanOrEqual(500);
    expect(decidedAtMs - atMs).toBeLessThan(520);
  });

  it('scores several calls in one batch exactly as it scores each alone', async () => {
    const makeCalls = (): Call[] => [
      { rateHz: 16000, audio: speech, decisions: [] },
      { rateHz: 16000, audio: speech.subarray(4000), decisions: [] },
      { rateHz: 8000, audio: resample(speech, 16000, 8000), decisions: [] },
      { rateHz: 48000, audio: resample(speech.subarray(9000), 16000, 48000), decisions: [] },
    ];
    const together = makeCalls();
    const shared = new SileroScheduler({ model });
    await runTicks(createSileroCallerVad(shared), shared, together);
    const stats = shared.stats();
    expect(stats.maxWindowsPerRun).toBeGreaterThanOrEqual(3);
    expect(stats.runs).toBeLessThan(together.reduce((n, call) => n + call.decisions.length, 0));

    for (const [i, alone] of makeCalls().entries()) {
      const scheduler = new SileroScheduler({ model });
      await runTicks(createSileroCallerVad(scheduler), scheduler, [alone]);
      const batched = together[i]!.decisions;
      expect(batched.length).toBe(alone.decisions.length);
      for (const [k, decision] of alone.decisions.entries()) {
        expect(batched[k]!.startMs).toBe(decision.startMs);
        expect(Math.abs(batched[k]!.probability - decision.probability)).toBeLessThan(1e-4);
      }
    }
  });

  it('never runs twice at once: a flush during a run waits for the next tick', async () => {
    const scheduler = new SileroScheduler({ model });
    const decisions: Decision[] = [];
    const vad = createSileroCallerVad(scheduler)(16000, (probability, startMs, endMs) =>
      decisions.push({ probability, startMs, endMs }),
    );
    vad.push(speech.subarray(16000, 16000 + 1024), 0);
    scheduler.flush();
    expect(scheduler.running).toBe(true);
    vad.push(speech.subarray(17024, 17024 + 512), 64);
    scheduler.flush();
    expect(scheduler.stats().skippedFlushes).toBe(1);
    await scheduler.idle();
    // The one run picked up the window that arrived while it ran.
    expect(scheduler.stats().runs).toBe(1);
    expect(decisions.map((d) => d.startMs)).toEqual([0, 32, 64]);
    scheduler.flush();
    await scheduler.idle();
    expect(scheduler.stats().runs).toBe(1);
    expect(scheduler.stats().windowsInferred).toBe(3);
    vad.close();
  });

  it('falls back to the energy gate when the model cannot load', async () => {
    const failing = Promise.reject(new Error('no model'));
    const scheduler = new SileroScheduler({ model: failing });
    await failing.catch(() => undefined);
    const call: Call = { rateHz: 16000, audio: speech, decisions: [] };
    await runTicks(createSileroCallerVad(scheduler), scheduler, [call]);
    expect(scheduler.stats().modelState).toBe('failed');
    expect(scheduler.stats().windowsByEnergy).toBeGreaterThan(0);
    const probabilities = new Set(call.decisions.map((d) => d.probability));
    expect(probabilities).toEqual(new Set([0, 1]));
  });

  it('reports a listener that throws and keeps scoring the other calls', async () => {
    const scheduler = new SileroScheduler({ model });
    const errors: unknown[] = [];
    const factory = createSileroCallerVad(scheduler, (error) => errors.push(error));
    const good: Decision[] = [];
    const bad = factory(16000, () => {
      throw new Error('listener broke');
    });
    const ok = factory(16000, (probability, startMs, endMs) =>
      good.push({ probability, startMs, endMs }),
    );
    bad.push(speech.subarray(16000, 16512), 0);
    ok.push(speech.subarray(16000, 16512), 0);
    scheduler.flush();
    await scheduler.idle();
    expect(errors).toHaveLength(1);
    expect(good).toHaveLength(1);
    bad.close();
    ok.close();
    expect(scheduler.size).toBe(0);
  });
});
