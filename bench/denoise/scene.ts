/**
 * The measurement scene for the Fourier denoiser and the shadow-filtering runner (see
 * bench/denoise/snr.ts).
 */
import {
  FourierDenoiser,
  type FourierDenoiserOptions,
} from '../../src/pipeline/denoise/fourier-denoiser.js';
import { OverlapAddStft } from '../../src/pipeline/denoise/stft.js';
import {
  loadFixture,
  makeNoise,
  normalize,
  rms,
  segmentalSnrDb,
  snrDb,
  toPcm16,
  type NoiseKind,
} from './signals.js';

export const RATE = 16000;
export const SPEECH_RMS = 32768 * Math.pow(10, -26 / 20);
export const LEAD_IN = 3 * RATE;

export interface ShadowResult {
  output: Int16Array;
  speechOut: Int16Array;
  noiseOut: Int16Array;
  latency: number;
  mediaShare: number;
}

/** Runs the mixture through the denoiser and the speech and noise through its gains. */
export function runShadow(
  speech: Float64Array,
  noise: Float64Array,
  options: Omit<FourierDenoiserOptions, 'sampleRateHz'>,
): ShadowResult {
  const denoiser = new FourierDenoiser({ sampleRateHz: RATE, enabled: true, ...options });
  const hop = denoiser.hopSize;
  const length = Math.floor(speech.length / hop) * hop;
  const mix = toPcm16(speech.map((s, i) => s + noise[i]!));
  const speechIn = toPcm16(speech);
  const noiseIn = toPcm16(noise);
  const output = new Int16Array(length);
  const speechOut = new Int16Array(length);
  const noiseOut = new Int16Array(length);
  const shadows = [new OverlapAddStft(hop), new OverlapAddStft(hop)] as const;
  const gains = denoiser.spectralGate.gains;
  let mediaBlocks = 0;
  for (let offset = 0; offset < length; offset += hop) {
    denoiser.process(mix.subarray(offset, offset + hop), output.subarray(offset, offset + hop));
    mediaBlocks += denoiser.mediaDetected ? 1 : 0;
    for (const [stft, input, out] of [
      [shadows[0], speechIn, speechOut],
      [shadows[1], noiseIn, noiseOut],
    ] as const) {
      stft.analyze(input, offset);
      for (let k = 0; k < gains.length; k++) {
        stft.re[k] = stft.re[k]! * gains[k]!;
        stft.im[k] = stft.im[k]! * gains[k]!;
      }
      stft.synthesize(out, offset);
    }
  }
  return {
    output,
    speechOut,
    noiseOut,
    latency: denoiser.latencySamples,
    mediaShare: mediaBlocks / (length / hop),
  };
}

/** The speech track (lead-in silence, fixture twice) and the noise scaled to `snr` dB. */
export function buildScene(kind: NoiseKind, snr: number, seed = 7) {
  const clean = normalize(loadFixture('clean-speech-16k.wav').samples, SPEECH_RMS);
  const speech = new Float64Array(LEAD_IN + 2 * clean.length);
  speech.set(clean, LEAD_IN);
  speech.set(clean, LEAD_IN + clean.length);
  const noise = makeNoise(kind, speech.length, RATE, seed);
  const noiseRms = rms(speech, LEAD_IN) / Math.pow(10, snr / 20);
  normalize(noise, (noiseRms * rms(noise)) / rms(noise, LEAD_IN));
  return { speech, noise };
}

function energy(samples: ArrayLike<number>, start: number, end: number): number {
  let sum = 0;
  for (let i = start; i < end && i < samples.length; i++) {
    sum += samples[i]! * samples[i]!;
  }
  return sum;
}

const db = (ratio: number) => 10 * Math.log10(ratio);

/** SNR figures of one scene (see the header of bench/denoise/snr.ts). */
export function measure(
  kind: NoiseKind,
  snr: number,
  options: Omit<FourierDenoiserOptions, 'sampleRateHz'>,
) {
  const { speech, noise } = buildScene(kind, snr);
  const run = runShadow(speech, noise, options);
  const lag = run.latency;
  const end = run.output.length - lag;
  const mix = speech.map((s, i) => s + noise[i]!);
  const speechPart = { start: LEAD_IN, end };
  const sIn = energy(speech, speechPart.start, speechPart.end);
  const nIn = energy(noise, speechPart.start, speechPart.end);
  const sOut = energy(run.speechOut, speechPart.start + lag, speechPart.end + lag);
  const nOut = energy(run.noiseOut, speechPart.start + lag, speechPart.end + lag);
  // Noise alone after the baseline warm-up (1 … 3 s).
  const leadStart = RATE;
  const leadOut = energy(run.output, leadStart + lag, LEAD_IN + lag);
  return {
    snrIn: db(sIn / nIn),
    snrOut: snrDb(speech, run.output, lag, speechPart.start, speechPart.end),
    segIn: segmentalSnrDb(speech, mix, 0, RATE, speechPart.start, speechPart.end),
    segOut: segmentalSnrDb(speech, run.output, lag, RATE, speechPart.start, speechPart.end),
    shadowSnrOut: db(sOut / nOut),
    noiseCut: db(nIn / nOut),
    speechCut: db(sIn / sOut),
    leadInCut: db(energy(noise, leadStart, LEAD_IN) / leadOut),
    mediaShare: run.mediaShare,
  };
}
