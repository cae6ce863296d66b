import { describe, expect, it } from 'vitest';
import { buildScene, measure } from '../../../bench/denoise/scene.js';
import { seededRandom, toPcm16, whiteNoise } from '../../../bench/denoise/signals.js';
import { createAudioFrame, SAMPLE_RATES_HZ } from '../../../src/media/audio-frame.js';
import {
  FourierDenoiser,
  type FourierDenoiserOptions,
} from '../../../src/pipeline/denoise/fourier-denoiser.js';

const OPEN_GATE = { maxAttenuationDb: 0, mediaMaxAttenuationDb: 0 };

/** Runs `input` through `denoiser` in frames of the given sizes (cycled), returning the output. */
function run(denoiser: FourierDenoiser, input: Int16Array, frameMs: readonly (10 | 20)[]) {
  const output = new Int16Array(input.length);
  let offset = 0;
  for (let i = 0; offset < input.length; i++) {
    const size = (denoiser.sampleRateHz * frameMs[i % frameMs.length]!) / 1000;
    if (offset + size > input.length) {
      break;
    }
    denoiser.process(input.subarray(offset, offset + size), output.subarray(offset, offset + size));
    offset += size;
  }
  return output.subarray(0, offset);
}

function energy(samples: ArrayLike<number>, start: number, end: number): number {
  let sum = 0;
  for (let i = start; i < end; i++) {
    sum += samples[i]! * samples[i]!;
  }
  return sum;
}

function speechLike(length: number, sampleRateHz: number, seed: number): Int16Array {
  const random = seededRandom(seed);
  return Int16Array.from({ length }, (_, i) => {
    const t = i / sampleRateHz;
    const envelope = 0.5 + 0.5 * Math.sin(2 * Math.PI * 3 * t);
    return Math.round(
      envelope *
        (8000 * Math.sin(2 * Math.PI * 220 * t) + 3000 * Math.sin(2 * Math.PI * 1330 * t)) +
        2000 * (random() - 0.5),
    );
  });
}

describe('FourierDenoiser with the gate fully open', () => {
  it.each(SAMPLE_RATES_HZ)('reconstructs the input after latencyMs at %i Hz', (rate) => {
    const denoiser = new FourierDenoiser({ sampleRateHz: rate, enabled: true, tuning: OPEN_GATE });
    expect(denoiser.latencyMs).toBe(10);
    expect(denoiser.latencySamples).toBe(rate / 100);
    const input = speechLike(rate * 2, rate, 1);
    const output = run(denoiser, input, [20, 10]);
    const lag = denoiser.latencySamples;
    let worst = 0;
    for (let i = 0; i + lag < output.length; i++) {
      worst = Math.max(worst, Math.abs(output[i + lag]! - input[i]!));
    }
    expect(worst).toBeLessThanOrEqual(1);
    expect(Array.from(output.subarray(0, lag)).every((v) => v === 0)).toBe(true);
  });
});

describe('FourierDenoiser gating', () => {
  it('keeps digital silence silent', () => {
    const denoiser = new FourierDenoiser({ sampleRateHz: 16000, enabled: true });
    const output = run(denoiser, new Int16Array(16000 * 5), [20]);
    expect(output.every((v) => v === 0)).toBe(true);
  });

  it.each([8000, 16000, 48000])(
    'attenuates white noise alone by at least 15 dB once the baseline has formed (%i Hz)',
    (rate) => {
      // Measured: 20–21 dB at −60 … −15 dBFS and 8–48 kHz (maxAttenuationDb is 25).
      for (const levelDbfs of [-45, -20]) {
        const gain = 32768 * Math.pow(10, levelDbfs / 20);
        const input = toPcm16(whiteNoise(rate * 4, 11).map((v) => v * gain));
        const denoiser = new FourierDenoiser({ sampleRateHz: rate, enabled: true });
        const output = run(denoiser, input, [20]);
        expect(denoiser.baselineEstablished).toBe(true);
        expect(denoiser.mediaDetected).toBe(false);
        const lag = denoiser.latencySamples;
        const cutDb =
          10 *
          Math.log10(
            energy(input, 2 * rate - lag, 4 * rate - lag) / energy(output, 2 * rate, 4 * rate),
          );
        expect(cutDb).toBeGreaterThanOrEqual(15);
      }
    },
  );

  it('raises the SNR of speech in noise at 10 dB SNR', () => {
    // Measured ΔSNR against the clean speech: white 5.7 dB, pink 2.7 dB (bench/denoise/snr.ts).
    const white = measure('white', 10, {});
    expect(white.snrOut - white.snrIn).toBeGreaterThanOrEqual(3);
    expect(white.segOut - white.segIn).toBeGreaterThanOrEqual(3);
    const pink = measure('pink', 10, {});
    expect(pink.snrOut - pink.snrIn).toBeGreaterThanOrEqual(1.5);
    expect(pink.speechCut).toBeLessThan(1.5);
  });

  it('gives the same output whatever the mix of 10 and 20 ms frames', () => {
    const { speech, noise } = buildScene('white', 5);
    const input = toPcm16(speech.map((s, i) => s + noise[i]!)).subarray(0, 16000 * 8);
    const options: FourierDenoiserOptions = { sampleRateHz: 16000, enabled: true };
    const by10 = run(new FourierDenoiser(options), input, [10]);
    const by20 = run(new FourierDenoiser(options), input, [20]);
    const mixed = run(new FourierDenoiser(options), input, [10, 20, 20, 10, 10]);
    const length = Math.min(by10.length, by20.length, mixed.length);
    expect(length).toBeGreaterThan(16000 * 7);
    expect(by20.subarray(0, length)).toEqual(by10.subarray(0, length));
    expect(mixed.subarray(0, length)).toEqual(by10.subarray(0, length));
  });

  it('processes in place like into a separate buffer', () => {
    const input = speechLike(16000, 16000, 2);
    const separate = run(new FourierDenoiser({ sampleRateHz: 16000, enabled: true }), input, [20]);
    const inPlace = input.slice();
    const denoiser = new FourierDenoiser({ sampleRateHz: 16000, enabled: true });
    for (let offset = 0; offset < inPlace.length; offset += 320) {
      const frame = inPlace.subarray(offset, offset + 320);
      denoiser.process(frame, frame);
    }
    expect(inPlace).toEqual(separate);
  });

  it('reset() starts a new stream', () => {
    const input = speechLike(16000 * 2, 16000, 3);
    const denoiser = new FourierDenoiser({ sampleRateHz: 16000, enabled: true });
    const first = run(denoiser, input, [20]).slice();
    run(denoiser, speechLike(16000, 16000, 4), [20]);
    denoiser.reset();
    expect(run(denoiser, input, [20])).toEqual(first);
  });
});

describe('FourierDenoiser frames', () => {
  it('passes audio through untouched, with no delay, when disabled', () => {
    for (const options of [{}, { enabled: false }] as const) {
      const denoiser = new FourierDenoiser({ sampleRateHz: 16000, ...options });
      expect(denoiser.enabled).toBe(false);
      expect(denoiser.latencyMs).toBe(0);
      const input = speechLike(16000, 16000, 5);
      const output = run(denoiser, input, [20, 10]);
      expect(output.length).toBeGreaterThan(15000);
      expect(output).toEqual(input.subarray(0, output.length));
    }
  });

  it.each([0, 1, 159, 161, 240, 480, 641])('rejects a %i-sample frame at 16 kHz', (length) => {
    const denoiser = new FourierDenoiser({ sampleRateHz: 16000, enabled: true });
    expect(() => denoiser.process(new Int16Array(length), new Int16Array(length))).toThrow(
      RangeError,
    );
  });

  it('rejects an output of another length and frames of another rate', () => {
    const denoiser = new FourierDenoiser({ sampleRateHz: 16000, enabled: true });
    expect(() => denoiser.process(new Int16Array(320), new Int16Array(160))).toThrow(/output/);
    const frame = createAudioFrame(8000, 20);
    expect(() => denoiser.processFrame(frame, frame)).toThrow(/8000/);
  });

  it('processFrame() stamps the output with the time of the audio it holds', () => {
    const denoiser = new FourierDenoiser({ sampleRateHz: 48000, enabled: true });
    const input = createAudioFrame(48000, 20, 1000);
    const output = createAudioFrame(48000, 20);
    denoiser.processFrame(input, output);
    expect(output.ptsMs).toBe(990);
    denoiser.processFrame(input, input);
    expect(input.ptsMs).toBe(990);
  });
});
