/**
 * `npx tsx bench/vad/silero.ts`: cost of the VAD building blocks on this machine.
 *
 * - Silero v5 (one intra-op thread) through `SileroModel.runBatch`, batch 1, 8 and 32: µs per
 *   call-window (a window is 32 ms of one call), on speech windows from the fixture.
 * - The per-call path `SileroVad.pushFrame` + `scoreSileroWindows` with N calls (gate off), µs per
 *   call-window including accumulation, state gather/scatter and callbacks.
 * - `EnergyVad.process`, µs per 10 ms and 20 ms frame at 16 kHz.
 *
 * Each figure is the median over rounds of the mean over many iterations, after a warm-up.
 * Share of a core per call = cost per window / 32 ms (Silero) or per frame / frame length (energy).
 */
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { readWav } from '../../src/media/codecs/wav.js';
import { EnergyVad } from '../../src/pipeline/vad/energy-vad.js';
import { SileroModel } from '../../src/pipeline/vad/silero-model.js';
import {
  scoreSileroWindows,
  SileroBatchBuffers,
  SileroVad,
} from '../../src/pipeline/vad/silero-vad.js';

const ROUNDS = 7;
const WINDOW_MS = 32;

const speech = readWav(
  readFileSync(new URL('../../test/fixtures/denoise/clean-speech-16k.wav', import.meta.url)),
).samples;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Median over rounds of µs per unit; `body` performs `units` units of work. */
async function measure(
  iterations: number,
  units: number,
  body: () => Promise<void> | void,
): Promise<number> {
  for (let i = 0; i < Math.max(20, iterations / 10); i++) {
    await body();
  }
  const perRound: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) {
      await body();
    }
    const ns = Number(process.hrtime.bigint() - start);
    perRound.push(ns / 1000 / iterations / units);
  }
  return median(perRound);
}

function share(usPerUnit: number, unitMs: number): string {
  return `${((usPerUnit / (unitMs * 1000)) * 100).toFixed(3)} %`;
}

const rows: { what: string; us: number; unit: string; share: string }[] = [];
const model = await SileroModel.create();

for (const batch of [1, 8, 32]) {
  const inputs = new Float32Array(batch * 576);
  for (let b = 0; b < batch; b++) {
    const from = 6400 + ((b * 3000) % 80000);
    for (let i = 0; i < 576; i++) {
      inputs[b * 576 + i] = speech[from + i]! / 32768;
    }
  }
  const states = new Float32Array(batch * 256);
  const probabilities = new Float32Array(batch);
  const iterations = Math.max(100, Math.round(3000 / batch));
  const us = await measure(iterations, batch, () =>
    model.runBatch(16000, inputs, states, batch, probabilities),
  );
  rows.push({
    what: `Silero runBatch, batch ${batch}`,
    us,
    unit: 'call-window',
    share: share(us, WINDOW_MS),
  });
}

for (const calls of [1, 8, 32]) {
  const vads = Array.from(
    { length: calls },
    () => new SileroVad({ sampleRateHz: 16000, gate: false, onWindow: () => undefined }),
  );
  const buffers = new SileroBatchBuffers();
  let offset = 4800;
  // 8 frames of 20 ms = 160 ms = exactly 5 windows per call per iteration.
  const us = await measure(Math.max(20, Math.round(600 / calls)), calls * 5, async () => {
    for (let f = 0; f < 8; f++) {
      if (offset + 320 > speech.length - 4800) {
        offset = 4800;
      }
      const frame = speech.subarray(offset, offset + 320);
      offset += 320;
      for (const vad of vads) {
        vad.pushFrame(frame, 0);
      }
      await scoreSileroWindows(model, vads, buffers);
    }
  });
  rows.push({
    what: `SileroVad per call, ${calls} call(s) per tick, gate off`,
    us,
    unit: 'call-window',
    share: share(us, WINDOW_MS),
  });
}

for (const frameMs of [10, 20] as const) {
  const vad = new EnergyVad({ sampleRateHz: 16000 });
  const size = 16 * frameMs;
  const frames = Math.floor(speech.length / size);
  let f = 0;
  const us = await measure(20000, 1, () => {
    vad.process(speech.subarray(f * size, (f + 1) * size));
    f = (f + 1) % frames;
  });
  rows.push({
    what: `EnergyVad.process, ${frameMs} ms at 16 kHz`,
    us,
    unit: 'frame',
    share: share(us, frameMs),
  });
}

await model.release();

console.log(
  `Node ${process.version}, ${availableParallelism()} cores (${cpus()[0]?.model ?? 'unknown CPU'})`,
);
console.table(
  rows.map((r) => ({
    measurement: r.what,
    'µs per unit': Number(r.us.toFixed(2)),
    unit: r.unit,
    'share of a core per call': r.share,
  })),
);
