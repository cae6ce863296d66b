/** Resampling one 20 ms frame, streaming.  npx tsx bench/media/resampler.bench.ts */
import { bench, do_not_optimize } from 'mitata';
import { Resampler, type ResamplerRateHz } from '../../src/media/resample/resampler.js';
import { runFrameBenchmarks } from './report.js';

const pairs: [ResamplerRateHz, ResamplerRateHz][] = [
  [48000, 16000],
  [8000, 16000],
  [16000, 8000],
  [24000, 8000],
  [24000, 16000],
  [44100, 48000],
];

for (const [from, to] of pairs) {
  const resampler = new Resampler({ inputRateHz: from, outputRateHz: to });
  const input = Int16Array.from({ length: from / 50 }, (_, i) =>
    Math.round(12000 * Math.sin((2 * Math.PI * 440 * i) / from)),
  );
  const output = new Int16Array(resampler.maxOutputLength(input.length));
  bench(
    `resample ${from} → ${to} Hz, ${input.length} samples in (${resampler.tapsPerPhase} taps)`,
    () => do_not_optimize(resampler.process(input, output)),
  );
}

await runFrameBenchmarks('Resampler');
