/**
 * RNNoise denoiser (smartDenoisingPlan) measurements: CPU per frame including the resampling,
 * and SNR on speech mixed with noise at known SNRs next to the Fourier denoiser's figures.
 * Deterministic apart from the timings.
 *   npx tsx bench/denoise/rnnoise.ts [--quick]
 *
 * Signal: the scene of bench/denoise/snr.ts (3 s of noise alone, then the clean speech fixture
 * twice, speech at −26 dBFS RMS, noise scaled to the target SNR over the speech part), at 16 kHz
 * in 20 ms frames. RNNoise is a black box (no per-bin gains to shadow-filter with), so only the
 * figures against the clean reference are given: SNR and segmental SNR of the output, delayed
 * by latencySamples, and the cut of the noise alone over 1 … 3 s.
 */
import { hrtime } from 'node:process';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Resampler } from '../../src/media/resample/resampler.js';
import { RnnoiseDenoiser } from '../../src/pipeline/denoise/rnnoise-denoiser.js';
import {
  loadRnnoiseModule,
  RNNOISE_FRAME_SAMPLES,
} from '../../src/pipeline/denoise/rnnoise-module.js';
import { buildScene, LEAD_IN, measure, RATE } from './scene.js';
import { makeNoise, segmentalSnrDb, snrDb, toPcm16, type NoiseKind } from './signals.js';

const quick = process.argv.includes('--quick');

const f1 = (value: number) => (value >= 0 ? ' ' : '') + value.toFixed(1);

function energy(samples: ArrayLike<number>, start: number, end: number): number {
  let sum = 0;
  for (let i = start; i < end && i < samples.length; i++) {
    sum += samples[i]! * samples[i]!;
  }
  return sum;
}

/** Median of 5 timed runs of `run`, in µs per call (`calls` calls per run), after a warm-up. */
function timeMicros(run: () => void, calls: number): number {
  run();
  const times: number[] = [];
  for (let r = 0; r < 5; r++) {
    const start = hrtime.bigint();
    run();
    times.push(Number(hrtime.bigint() - start) / 1000 / calls);
  }
  times.sort((a, b) => a - b);
  return times[2]!;
}

async function measureRnnoise(kind: NoiseKind, snr: number) {
  const { speech, noise } = buildScene(kind, snr);
  const frame = RATE / 50;
  const length = speech.length - (speech.length % frame);
  const mix = speech.map((s, i) => s + noise[i]!);
  const input = toPcm16(mix).subarray(0, length);
  const output = new Int16Array(length);
  const denoiser = await RnnoiseDenoiser.create({ sampleRateHz: RATE, enabled: true });
  let speechProbability = 0;
  let leadProbability = 0;
  for (let offset = 0; offset < length; offset += frame) {
    denoiser.process(
      input.subarray(offset, offset + frame),
      output.subarray(offset, offset + frame),
    );
    if (offset >= RATE && offset < LEAD_IN) {
      leadProbability += denoiser.voiceProbability;
    } else if (offset >= LEAD_IN) {
      speechProbability += denoiser.voiceProbability;
    }
  }
  const lag = Math.round(denoiser.latencySamples);
  denoiser.close();
  const end = length - lag;
  const leadStart = RATE;
  return {
    snrIn: snrDb(speech, mix, 0, LEAD_IN, end),
    snrOut: snrDb(speech, output, lag, LEAD_IN, end),
    segIn: segmentalSnrDb(speech, mix, 0, RATE, LEAD_IN, end),
    segOut: segmentalSnrDb(speech, output, lag, RATE, LEAD_IN, end),
    leadInCut:
      10 *
      Math.log10(
        energy(noise, leadStart, LEAD_IN) / energy(output, leadStart + lag, LEAD_IN + lag),
      ),
    leadProbability: leadProbability / ((LEAD_IN - leadStart) / frame),
    speechProbability: speechProbability / ((end - LEAD_IN) / frame),
  };
}

async function snrTable() {
  console.log('\n### SNR, RNNoise next to the Fourier denoiser (defaults), 16 kHz\n');
  console.log(
    '| noise | input SNR dB | RNNoise output SNR dB | RNNoise ΔSNR dB | Fourier ΔSNR dB | ' +
      'RNNoise segSNR in → out dB | RNNoise Δ segSNR dB | Fourier Δ segSNR dB | ' +
      'RNNoise noise-only cut dB | Fourier noise-only cut dB | P(voice) noise-only / speech |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  const kinds: NoiseKind[] = ['white', 'pink', 'babble', 'music'];
  for (const kind of kinds) {
    for (const snr of quick ? [10] : [0, 5, 10, 20]) {
      const r = await measureRnnoise(kind, snr);
      const f = measure(kind, snr, {});
      console.log(
        `| ${kind} | ${r.snrIn.toFixed(1)} | ${r.snrOut.toFixed(1)} | ${f1(r.snrOut - r.snrIn)} | ` +
          `${f1(f.snrOut - f.snrIn)} | ${r.segIn.toFixed(1)} → ${r.segOut.toFixed(1)} | ` +
          `${f1(r.segOut - r.segIn)} | ${f1(f.segOut - f.segIn)} | ${r.leadInCut.toFixed(1)} | ` +
          `${f.leadInCut.toFixed(1)} | ${r.leadProbability.toFixed(2)} / ` +
          `${r.speechProbability.toFixed(2)} |`,
      );
    }
  }
}

async function cpuTable() {
  console.log('\n### CPU per frame (hrtime loop, speech-like tone + white noise)\n');
  console.log(
    '| rate Hz | frame ms | frames timed | µs per frame, total (median of 5) | ' +
      'of which resampling µs | share of one core |',
  );
  console.log('|---:|---:|---:|---:|---:|---:|');
  for (const [rate, frameMs] of [
    [16000, 20],
    [16000, 10],
    [8000, 20],
    [24000, 20],
    [48000, 20],
  ] as const) {
    const frame = (rate * frameMs) / 1000;
    const length = rate * 4;
    const noise = makeNoise('white', length, rate, 3);
    const input = toPcm16(
      noise.map((v, i) => 500 * v + 3000 * Math.sin(i / 7) * (i % rate < rate / 2 ? 1 : 0)),
    );
    const output = new Int16Array(frame);
    const frames = Array.from({ length: length / frame }, (_, f) =>
      input.subarray(f * frame, (f + 1) * frame),
    );
    const framesPerRun = quick ? 200 : 2000;
    const denoiser = await RnnoiseDenoiser.create({ sampleRateHz: rate, enabled: true });
    const micros = timeMicros(() => {
      for (let f = 0; f < framesPerRun; f++) {
        denoiser.process(frames[f % frames.length]!, output);
      }
    }, framesPerRun);
    denoiser.close();
    // The two resamplers alone, on the same frames.
    const up = new Resampler({ inputRateHz: rate, outputRateHz: 48000 });
    const down = new Resampler({ inputRateHz: 48000, outputRateHz: rate });
    const mid = new Int16Array(up.maxOutputLength(frame) + 1);
    const resampleMicros = timeMicros(() => {
      for (let f = 0; f < framesPerRun; f++) {
        const n = up.process(frames[f % frames.length]!, mid);
        down.process(mid, output, 0, n);
      }
    }, framesPerRun);
    console.log(
      `| ${rate} | ${frameMs} | ${5 * framesPerRun} | ${micros.toFixed(1)} | ` +
        `${resampleMicros.toFixed(1)} | ${((100 * micros) / (frameMs * 1000)).toFixed(2)}% |`,
    );
  }
}

/** The bare WASM call on one 480-sample frame, for comparison with measured-costs.md. */
async function bareFrame() {
  const module = await loadRnnoiseModule();
  const state = module._rnnoise_create(0);
  const buffer = module._malloc(RNNOISE_FRAME_SAMPLES * 4);
  const noise = makeNoise('white', RNNOISE_FRAME_SAMPLES * 100, 48000, 9);
  const calls = quick ? 500 : 5000;
  const micros = timeMicros(() => {
    for (let c = 0; c < calls; c++) {
      const heap = module.HEAPF32;
      const base = buffer >>> 2;
      const offset = (c % 100) * RNNOISE_FRAME_SAMPLES;
      for (let k = 0; k < RNNOISE_FRAME_SAMPLES; k++) {
        heap[base + k] = 1000 * noise[offset + k]!;
      }
      module._rnnoise_process_frame(state, buffer, buffer);
    }
  }, calls);
  module._rnnoise_destroy(state);
  module._free(buffer);
  console.log(
    `\nBare rnnoise_process_frame (480 samples at 48 kHz, copy in included): ` +
      `${micros.toFixed(1)} µs per 10 ms frame (${(micros / 100).toFixed(2)}% of a core).`,
  );
}

/** Heap growth per process() call in steady state, after forced collections. */
async function allocationCheck() {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const frame = 320;
  const input = toPcm16(makeNoise('pink', RATE * 4, RATE, 5).map((v) => 1000 * v));
  const frames = Array.from({ length: input.length / frame }, (_, f) =>
    input.subarray(f * frame, (f + 1) * frame),
  );
  const output = new Int16Array(frame);
  const denoiser = await RnnoiseDenoiser.create({ sampleRateHz: RATE, enabled: true });
  const calls = quick ? 5_000 : 50_000;
  for (let f = 0; f < 2000; f++) {
    denoiser.process(frames[f % frames.length]!, output);
  }
  gc();
  gc();
  const before = getHeapStatistics().used_heap_size;
  for (let f = 0; f < calls; f++) {
    denoiser.process(frames[f % frames.length]!, output);
  }
  const after = getHeapStatistics().used_heap_size;
  denoiser.close();
  console.log(
    `\nHeap growth over ${calls.toLocaleString('en')} process() calls of 20 ms at 16 kHz: ` +
      `${(after - before).toLocaleString('en')} bytes (${((after - before) / calls).toFixed(3)} ` +
      'bytes per call).',
  );
}

console.log(`Node ${process.version}, ${new Date().toISOString().slice(0, 10)}`);
for (const rate of [8000, 16000, 24000, 44100, 48000]) {
  const d = await RnnoiseDenoiser.create({ sampleRateHz: rate, enabled: true });
  console.log(
    `latency at ${rate} Hz: ${d.latencyMs.toFixed(4)} ms (${d.latencySamples.toFixed(3)} samples)`,
  );
  d.close();
}
await cpuTable();
await bareFrame();
await allocationCheck();
await snrTable();
