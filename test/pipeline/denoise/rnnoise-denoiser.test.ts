import { describe, expect, it } from 'vitest';
import { buildScene, LEAD_IN, RATE } from '../../../bench/denoise/scene.js';
import { makeNoise, snrDb, toPcm16 } from '../../../bench/denoise/signals.js';
import { RnnoiseDenoiser } from '../../../src/pipeline/denoise/rnnoise-denoiser.js';
import { loadRnnoiseModule } from '../../../src/pipeline/denoise/rnnoise-module.js';

/** Runs `input` through a fresh denoiser in frames of the given sizes (in 10 ms hops, cycled). */
async function run(
  input: Int16Array,
  sampleRateHz: number,
  hopsPerFrame: readonly number[] = [2],
): Promise<{ output: Int16Array; denoiser: RnnoiseDenoiser; probabilities: number[] }> {
  const denoiser = await RnnoiseDenoiser.create({ sampleRateHz, enabled: true });
  const hop = denoiser.hopSize;
  const length = Math.floor(input.length / hop) * hop;
  const output = new Int16Array(length);
  const probabilities: number[] = [];
  let offset = 0;
  for (let f = 0; offset < length; f++) {
    const hops = Math.min(hopsPerFrame[f % hopsPerFrame.length]!, (length - offset) / hop);
    const end = offset + hops * hop;
    denoiser.process(input.subarray(offset, end), output.subarray(offset, end));
    probabilities.push(denoiser.voiceProbability);
    offset = end;
  }
  return { output, denoiser, probabilities };
}

function energyDb(samples: ArrayLike<number>, start: number, end: number): number {
  let sum = 0;
  for (let i = start; i < end; i++) {
    sum += samples[i]! * samples[i]!;
  }
  return 10 * Math.log10(sum / (end - start) + 1e-12);
}

describe('RnnoiseDenoiser', () => {
  it('passes frames through untouched, with no delay and no WASM, when disabled', async () => {
    const denoiser = await RnnoiseDenoiser.create({ sampleRateHz: 16000 });
    expect(denoiser.enabled).toBe(false);
    expect(denoiser.latencyMs).toBe(0);
    const input = Int16Array.from({ length: 320 }, (_, i) => (i * 97) % 2000);
    const output = new Int16Array(320);
    denoiser.process(input, output);
    expect(output).toEqual(input);
    denoiser.close();
  });

  it('rejects unsupported rates, bad plans and wrong frame lengths', async () => {
    await expect(RnnoiseDenoiser.create({ sampleRateHz: 12000, enabled: true })).rejects.toThrow(
      RangeError,
    );
    await expect(
      RnnoiseDenoiser.create({ sampleRateHz: 16000, enabled: 'yes' as unknown as boolean }),
    ).rejects.toThrow(/smartDenoisingPlan.enabled/);
    const denoiser = await RnnoiseDenoiser.create({ sampleRateHz: 16000, enabled: true });
    expect(() => denoiser.process(new Int16Array(200), new Int16Array(200))).toThrow(RangeError);
    expect(() => denoiser.process(new Int16Array(160), new Int16Array(320))).toThrow(RangeError);
    denoiser.close();
  });

  it('keeps length and latency exact over a long stream in any mix of 10 and 20 ms frames', async () => {
    const { speech, noise } = buildScene('white', 10);
    const length = speech.length - (speech.length % 320);
    const input = toPcm16(speech.map((s, i) => s + noise[i]!)).subarray(0, length);
    const twenty = await run(input, RATE, [2]);
    const ten = await run(input, RATE, [1]);
    const odd = await run(input, RATE, [1, 2, 2, 1, 1, 1, 2]);
    expect(twenty.output.length).toBe(input.length);
    expect(ten.output).toEqual(twenty.output);
    expect(odd.output).toEqual(twenty.output);
    const { denoiser } = twenty;
    expect(denoiser.latencySamples).toBe(228);
    expect(denoiser.latencyMs).toBeCloseTo(14.25, 9);
    // The output lines up with the clean speech at exactly latencySamples.
    let best = -1;
    let bestLag = -1;
    for (let lag = 150; lag < 300; lag++) {
      let dot = 0;
      for (let i = LEAD_IN; i + lag < input.length; i += 3) {
        dot += speech[i]! * twenty.output[i + lag]!;
      }
      if (dot > best) {
        best = dot;
        bestLag = lag;
      }
    }
    expect(bestLag).toBe(denoiser.latencySamples);
    for (const d of [twenty, ten, odd]) {
      d.denoiser.close();
    }
  }, 90_000);

  it('writes as many samples as it reads at every supported rate', async () => {
    for (const rate of [8000, 16000, 24000, 44100, 48000]) {
      const input = toPcm16(makeNoise('pink', rate, rate, 4).map((v) => 2000 * v));
      const { output, denoiser } = await run(input, rate, [1, 2, 1]);
      expect(output.length).toBe(input.length);
      expect(denoiser.latencyMs).toBeGreaterThanOrEqual(10);
      expect(denoiser.latencyMs).toBeLessThan(20);
      denoiser.close();
    }
  });

  it('turns silence into near silence', async () => {
    const { output, denoiser } = await run(new Int16Array(RATE * 3), RATE);
    let peak = 0;
    for (const v of output) {
      peak = Math.max(peak, Math.abs(v));
    }
    expect(peak).toBeLessThanOrEqual(1);
    denoiser.close();
  });

  it('attenuates white noise alone', async () => {
    const noise = makeNoise('white', RATE * 6, RATE, 11).map((v) => 1000 * v);
    const input = toPcm16(noise);
    const { output, denoiser } = await run(input, RATE);
    const lag = denoiser.latencySamples;
    const cut =
      energyDb(input, RATE, input.length - lag) - energyDb(output, RATE + lag, input.length);
    // Measured 42.6 dB (noise at −30 dBFS RMS); the floor leaves a wide margin.
    expect(cut).toBeGreaterThan(30);
    denoiser.close();
  });

  it('raises the SNR of speech in white noise at 10 dB', async () => {
    const { speech, noise } = buildScene('white', 10);
    const input = toPcm16(speech.map((s, i) => s + noise[i]!));
    const { output, denoiser, probabilities } = await run(input, RATE);
    const lag = denoiser.latencySamples;
    const end = input.length - lag;
    const snrIn = snrDb(speech, input, 0, LEAD_IN, end);
    const snrOut = snrDb(speech, output, lag, LEAD_IN, end);
    const framesIn = LEAD_IN / 320;
    const leadProb = probabilities.slice(25, framesIn).reduce((a, b) => a + b, 0) / (framesIn - 25);
    const speechProb =
      probabilities.slice(framesIn).reduce((a, b) => a + b, 0) / (probabilities.length - framesIn);
    // Measured 10.0 → 13.7 dB; voice probability 0.04 on noise alone, 0.67 over the speech.
    expect(snrOut - snrIn).toBeGreaterThan(2);
    expect(speechProb).toBeGreaterThan(leadProb + 0.3);
    denoiser.close();
  });

  it('frees its state on close(), after which it throws', async () => {
    const module = await loadRnnoiseModule();
    const warm = await RnnoiseDenoiser.create({ sampleRateHz: RATE, enabled: true });
    warm.close();
    const heapBytes = module.HEAPU8.length;
    for (let i = 0; i < 300; i++) {
      const denoiser = await RnnoiseDenoiser.create({ sampleRateHz: RATE, enabled: true });
      denoiser.process(new Int16Array(320), new Int16Array(320));
      denoiser.close();
    }
    expect(module.HEAPU8.length).toBe(heapBytes);
    const denoiser = await RnnoiseDenoiser.create({ sampleRateHz: RATE, enabled: true });
    denoiser.close();
    denoiser.close();
    expect(denoiser.isClosed).toBe(true);
    expect(() => denoiser.process(new Int16Array(320), new Int16Array(320))).toThrow(/closed/);
    expect(() => denoiser.reset()).toThrow(/closed/);
  });
});
