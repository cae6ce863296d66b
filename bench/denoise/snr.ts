/**
 * Fourier denoiser measurements: SNR gain on speech mixed with noise at known SNRs, and CPU cost
 * per frame. Deterministic apart from the timings.
 *   npx tsx bench/denoise/snr.ts [--quick]
 *
 * Signal: 3 s of noise alone (the baseline forms), then the clean speech fixture twice (~14 s)
 * with the noise going on; speech at −26 dBFS RMS, noise scaled so that Σspeech² / Σnoise² over
 * the speech part is the target SNR. The mixture runs through FourierDenoiser in 10 ms frames;
 * the same per-block gains are applied to the speech and the noise alone through two more STFTs
 * ("shadow filtering"), which splits the output into its speech and noise parts.
 */
import { hrtime } from 'node:process';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { FourierDenoiser } from '../../src/pipeline/denoise/fourier-denoiser.js';
import type { FourierDenoiserOptions } from '../../src/pipeline/denoise/fourier-denoiser.js';
import { buildScene, LEAD_IN, measure, RATE, runShadow } from './scene.js';
import { makeNoise, segmentalSnrDb, snrDb, toPcm16, type NoiseKind } from './signals.js';

const quick = process.argv.includes('--quick');

const f1 = (value: number) => (value >= 0 ? ' ' : '') + value.toFixed(1);

function snrTable(title: string, options: Omit<FourierDenoiserOptions, 'sampleRateHz'>) {
  console.log(`\n### ${title}\n`);
  console.log(
    '| noise | input SNR dB | output SNR dB (vs clean) | ΔSNR dB | segSNR in → out dB | ' +
      'Δ segSNR dB | shadow ΔSNR dB | noise cut dB | speech cut dB | noise-only cut dB | ' +
      'media on |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  const kinds: NoiseKind[] = ['white', 'pink', 'babble', 'music'];
  for (const kind of kinds) {
    for (const snr of quick ? [10] : [0, 5, 10, 20]) {
      const m = measure(kind, snr, options);
      console.log(
        `| ${kind} | ${m.snrIn.toFixed(1)} | ${m.snrOut.toFixed(1)} | ${f1(m.snrOut - m.snrIn)} | ` +
          `${m.segIn.toFixed(1)} → ${m.segOut.toFixed(1)} | ${f1(m.segOut - m.segIn)} | ` +
          `${f1(m.shadowSnrOut - m.snrIn)} | ${m.noiseCut.toFixed(1)} | ${m.speechCut.toFixed(1)} | ` +
          `${m.leadInCut.toFixed(1)} | ${(100 * m.mediaShare).toFixed(0)}% |`,
      );
    }
  }
}

function cpuTable() {
  console.log('\n### CPU per frame (hrtime loop, speech + white noise at 10 dB SNR)\n');
  console.log(
    '| rate Hz | frame ms | frames timed | µs per frame (median of 5) | share of one core |',
  );
  console.log('|---:|---:|---:|---:|---:|');
  for (const [rate, frameMs] of [
    [16000, 20],
    [16000, 10],
    [8000, 20],
    [24000, 20],
    [48000, 20],
  ] as const) {
    const frame = (rate * frameMs) / 1000;
    const length = rate * 4;
    const next = makeNoise('white', length, rate, 3);
    const input = toPcm16(
      next.map((v, i) => 500 * v + 3000 * Math.sin(i / 7) * (i % rate < rate / 2 ? 1 : 0)),
    );
    const output = new Int16Array(frame);
    const frames = Array.from({ length: length / frame }, (_, f) =>
      input.subarray(f * frame, (f + 1) * frame),
    );
    const denoiser = new FourierDenoiser({ sampleRateHz: rate, enabled: true });
    const framesPerRun = quick ? 500 : 5000;
    const run = () => {
      for (let f = 0; f < framesPerRun; f++) {
        denoiser.process(frames[f % frames.length]!, output);
      }
    };
    run(); // warm-up
    const times: number[] = [];
    for (let r = 0; r < 5; r++) {
      const start = hrtime.bigint();
      run();
      times.push(Number(hrtime.bigint() - start) / 1000 / framesPerRun);
    }
    times.sort((a, b) => a - b);
    const micros = times[2]!;
    console.log(
      `| ${rate} | ${frameMs} | ${5 * framesPerRun} | ${micros.toFixed(1)} | ` +
        `${((100 * micros) / (frameMs * 1000)).toFixed(2)}% |`,
    );
  }
}

/** Speech alone (no noise): what the gate costs the talker. */
function cleanSpeechTable() {
  console.log('\n### Clean speech alone (no noise): distortion\n');
  console.log('| baselineOffsetDb | output SNR vs input dB | segSNR dB | level change dB |');
  console.log('|---:|---:|---:|---:|');
  const { speech } = buildScene('white', 10);
  const silence = new Float64Array(speech.length);
  for (const baselineOffsetDb of [-10, -15, -20, -30]) {
    const run = runShadow(speech, silence, { baselineOffsetDb });
    const lag = run.latency;
    const end = run.output.length - lag;
    let inEnergy = 0;
    let outEnergy = 0;
    for (let i = LEAD_IN; i < end; i++) {
      inEnergy += speech[i]! * speech[i]!;
      outEnergy += run.output[i + lag]! * run.output[i + lag]!;
    }
    console.log(
      `| ${baselineOffsetDb} | ${snrDb(speech, run.output, lag, LEAD_IN, end).toFixed(1)} | ` +
        `${segmentalSnrDb(speech, run.output, lag, RATE, LEAD_IN, end).toFixed(1)} | ` +
        `${(10 * Math.log10(outEnergy / inEnergy)).toFixed(2)} |`,
    );
  }
}

/** Heap growth per process() call in steady state, after forced collections. */
function allocationCheck() {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const frame = 320;
  const input = toPcm16(makeNoise('pink', RATE * 4, RATE, 5).map((v) => 1000 * v));
  const frames = Array.from({ length: input.length / frame }, (_, f) =>
    input.subarray(f * frame, (f + 1) * frame),
  );
  const output = new Int16Array(frame);
  const denoiser = new FourierDenoiser({ sampleRateHz: RATE, enabled: true });
  const calls = quick ? 20_000 : 200_000;
  for (let f = 0; f < 5000; f++) {
    denoiser.process(frames[f % frames.length]!, output);
  }
  gc();
  gc();
  const before = getHeapStatistics().used_heap_size;
  for (let f = 0; f < calls; f++) {
    denoiser.process(frames[f % frames.length]!, output);
  }
  const after = getHeapStatistics().used_heap_size;
  console.log(
    `\nHeap growth over ${calls.toLocaleString('en')} process() calls of 20 ms at 16 kHz: ` +
      `${(after - before).toLocaleString('en')} bytes (${((after - before) / calls).toFixed(3)} ` +
      'bytes per call).',
  );
}

console.log(`Node ${process.version}, ${new Date().toISOString().slice(0, 10)}`);
snrTable('Defaults (offset −15 dB, percentile 85, window 3000 ms, media detection on)', {});
if (!quick) {
  snrTable('Media detection off', { mediaDetectionEnabled: false });
  snrTable('baselineOffsetDb −10 (more aggressive)', { baselineOffsetDb: -10 });
  snrTable('baselineOffsetDb −20 (more conservative)', { baselineOffsetDb: -20 });
}
cleanSpeechTable();
cpuTable();
allocationCheck();
