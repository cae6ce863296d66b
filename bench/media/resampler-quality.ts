/**
 * Resampler quality figures: for every rate pair, the designed filter's passband ripple and
 * worst stopband gain (from its frequency response), and signal measurements: the level of
 * passband tones and the level of aliases and images of out-of-band tones, after resampling.
 *   npx tsx bench/media/resampler-quality.ts
 */
import { filterGainDb } from '../../src/media/resample/filter-design.js';
import {
  RESAMPLER_RATES_HZ,
  Resampler,
  type ResamplerRateHz,
} from '../../src/media/resample/resampler.js';

const AMPLITUDE = 16000;

function sine(length: number, frequencyHz: number, rateHz: number): Int16Array {
  return Int16Array.from({ length }, (_, i) =>
    Math.round(AMPLITUDE * Math.sin((2 * Math.PI * frequencyHz * i) / rateHz)),
  );
}

/** Least-squares amplitude of the `frequencyHz` component of samples[start…]. */
function toneLevel(samples: Int16Array, frequencyHz: number, rateHz: number, start: number) {
  let ss = 0;
  let cc = 0;
  let sc = 0;
  let ys = 0;
  let yc = 0;
  for (let i = start; i < samples.length; i++) {
    const w = (2 * Math.PI * frequencyHz * i) / rateHz;
    const s = Math.sin(w);
    const c = Math.cos(w);
    ss += s * s;
    cc += c * c;
    sc += s * c;
    ys += samples[i]! * s;
    yc += samples[i]! * c;
  }
  const det = ss * cc - sc * sc;
  return Math.hypot((ys * cc - yc * sc) / det, (yc * ss - ys * sc) / det);
}

function db(ratio: number): string {
  return ratio === 0 ? '−inf' : (20 * Math.log10(ratio)).toFixed(2);
}

function resample(from: ResamplerRateHz, to: ResamplerRateHz, input: Int16Array) {
  const resampler = new Resampler({ inputRateHz: from, outputRateHz: to });
  const output = new Int16Array(resampler.outputLengthFor(input.length));
  resampler.process(input, output);
  const settle =
    Math.ceil((resampler.tapsPerPhase * resampler.upFactor) / resampler.downFactor) + 2;
  return { resampler, output, settle };
}

console.log('## Filter design (from the frequency response of the coefficient tables)\n');
console.log(
  '| from → to Hz | L/M | taps per phase | table (doubles) | group delay ms | passband | ' +
    'ripple dB (peak to peak) | stopband from | worst stopband gain dB |',
);
console.log('|---|---|---:|---:|---:|---|---:|---|---:|');
for (const from of RESAMPLER_RATES_HZ) {
  for (const to of RESAMPLER_RATES_HZ) {
    if (from === to) {
      continue;
    }
    const resampler = new Resampler({ inputRateHz: from, outputRateHz: to });
    const filter = resampler.filter!;
    let low = Infinity;
    let high = -Infinity;
    for (let i = 0; i <= 500; i++) {
      const gain = filterGainDb(filter, (filter.passbandEdgeHz * i) / 500);
      low = Math.min(low, gain);
      high = Math.max(high, gain);
    }
    let worst = -Infinity;
    const nyquistHz = (filter.upFactor * from) / 2;
    const points = 4000;
    for (let i = 0; i <= points; i++) {
      const f = filter.stopbandEdgeHz + ((nyquistHz - filter.stopbandEdgeHz) * i) / points;
      worst = Math.max(worst, filterGainDb(filter, f));
    }
    console.log(
      `| ${from} → ${to} | ${filter.upFactor}/${filter.downFactor} | ${filter.tapsPerPhase} | ` +
        `${filter.coefficients.length} | ${resampler.groupDelayMs.toFixed(2)} | ` +
        `0–${filter.passbandEdgeHz} Hz | ${(high - low).toFixed(4)} | ` +
        `${filter.stopbandEdgeHz} Hz | ${worst.toFixed(1)} |`,
    );
  }
}

console.log('\n## Measured on signals (amplitude 16000, 1 s, after the filter has settled)\n');
console.log(
  'Tone frequencies are not simple fractions of the rates, so that Int16 rounding spreads as ' +
    'noise instead of forming tones at the frequencies measured. "−inf" means the output was ' +
    'all zeros: the alias was below half an LSB (−90.1 dB re this amplitude).\n',
);
console.log(
  '| from → to Hz | input tone Hz | measured at Hz | level re input dB | filter gain at the ' +
    'input tone dB | what |',
);
console.log('|---|---:|---:|---:|---:|---|');
const passband: [ResamplerRateHz, ResamplerRateHz][] = [
  [48000, 16000],
  [8000, 16000],
  [16000, 8000],
  [24000, 8000],
  [44100, 48000],
];
for (const [from, to] of passband) {
  for (const fraction of [0.1, 0.5, 0.85]) {
    const toneHz = Math.round(fraction * (Math.min(from, to) / 2)) + 0.37;
    const { resampler, output, settle } = resample(from, to, sine(from, toneHz, from));
    const level = toneLevel(output, toneHz, to, settle);
    const gain = filterGainDb(resampler.filter!, toneHz).toFixed(4);
    console.log(
      `| ${from} → ${to} | ${toneHz} | ${toneHz} | ${db(level / AMPLITUDE)} | ${gain} | passband |`,
    );
  }
}
const aliasCases: [ResamplerRateHz, ResamplerRateHz, number][] = [
  [16000, 8000, 6000.37],
  [16000, 8000, 4200.37],
  [48000, 16000, 12000.37],
  [48000, 16000, 8500.37],
  [48000, 8000, 7000.37],
  [24000, 8000, 6000.37],
  [44100, 16000, 12000.37],
  [48000, 44100, 23000.37],
];
for (const [from, to, toneHz] of aliasCases) {
  const folded = toneHz % to;
  const aliasHz = folded > to / 2 ? to - folded : folded;
  const { resampler, output, settle } = resample(from, to, sine(from, toneHz, from));
  const level = toneLevel(output, aliasHz, to, settle);
  const gain = filterGainDb(resampler.filter!, toneHz).toFixed(1);
  let power = 0;
  for (let i = settle; i < output.length; i++) {
    power += output[i]! * output[i]!;
  }
  const rms = Math.sqrt(power / (output.length - settle));
  console.log(
    `| ${from} → ${to} | ${toneHz} | ${aliasHz.toFixed(2)} | ${db(level / AMPLITUDE)} | ${gain} | ` +
      `alias (whole output RMS ${db(rms / (AMPLITUDE / Math.SQRT2))} dB re input RMS) |`,
  );
}
const imageCases: [ResamplerRateHz, ResamplerRateHz, number][] = [
  [8000, 16000, 3000.37],
  [8000, 48000, 3000.37],
  [16000, 48000, 6000.37],
];
for (const [from, to, toneHz] of imageCases) {
  const { resampler, output, settle } = resample(from, to, sine(from, toneHz, from));
  let worst = -Infinity;
  let worstHz = 0;
  for (let k = 1; k * from - toneHz < to / 2; k++) {
    for (const imageHz of [k * from - toneHz, k * from + toneHz]) {
      if (imageHz < to / 2) {
        const level = toneLevel(output, imageHz, to, settle);
        if (level > worst) {
          worst = level;
          worstHz = imageHz;
        }
      }
    }
  }
  const gain = filterGainDb(resampler.filter!, worstHz).toFixed(1);
  console.log(
    `| ${from} → ${to} | ${toneHz} | ${worstHz.toFixed(2)} | ${db(worst / AMPLITUDE)} | ` +
      `${gain} (at the image) | worst image |`,
  );
}
