import { describe, expect, it } from 'vitest';
import { normalize, toPcm16, whiteNoise } from '../../bench/denoise/signals.js';
import type { BackgroundSpeechDenoisingPlan } from '../../src/pipeline/call-pipeline.js';
import { RnnoiseDenoiser } from '../../src/pipeline/denoise/rnnoise-denoiser.js';
import { levelDbfs } from '../../src/pipeline/vad/energy-vad.js';
import { PipelineDriver, speech } from './support/pipeline-driver.js';

const RATE = 16000;
const NOISE_MS = 3000;
const SPEECH_MS = 1500;

/** 3 s of white noise at −35 dBFS, then speech over the same noise. */
function scene(): Int16Array {
  const length = ((NOISE_MS + SPEECH_MS) * RATE) / 1000;
  const noise = normalize(whiteNoise(length, 11), 32768 * 10 ** (-35 / 20));
  const words = speech(SPEECH_MS);
  const start = (NOISE_MS * RATE) / 1000;
  for (let i = 0; i < words.length; i++) {
    noise[start + i] = noise[start + i]! + words[i]!;
  }
  return toPcm16(noise);
}

/** What the transcriber heard: levels of the noise (1–3 s) and of the speech part. */
async function transcriberLevels(
  plan: BackgroundSpeechDenoisingPlan | undefined,
): Promise<{ noiseDb: number; speechDb: number }> {
  const driver = new PipelineDriver({ pipeline: { backgroundSpeechDenoisingPlan: plan } });
  driver.transcriber.recordAudio = true;
  await driver.start();
  driver.say(scene());
  await driver.run(NOISE_MS + SPEECH_MS + 100);
  const heard = new Int16Array(driver.transcriber.pushedAudio.reduce((n, a) => n + a.length, 0));
  let at = 0;
  for (const piece of driver.transcriber.pushedAudio) {
    heard.set(piece, at);
    at += piece.length;
  }
  const ms = (t: number) => (t * RATE) / 1000;
  return {
    noiseDb: levelDbfs(heard.subarray(ms(1000), ms(NOISE_MS))),
    speechDb: levelDbfs(heard.subarray(ms(NOISE_MS + 100), ms(NOISE_MS + SPEECH_MS))),
  };
}

describe('CallPipeline: backgroundSpeechDenoisingPlan', () => {
  it('reduces noise on the way to the transcriber and keeps the speech', async () => {
    // Compile RNNoise's WASM up front, so the call's instance is ready after a few frames.
    (await RnnoiseDenoiser.create({ sampleRateHz: RATE, enabled: true })).close();
    const raw = await transcriberLevels(undefined);
    const fourier = await transcriberLevels({ fourierDenoisingPlan: { enabled: true } });
    const smart = await transcriberLevels({ smartDenoisingPlan: { enabled: true } });
    const both = await transcriberLevels({
      smartDenoisingPlan: { enabled: true },
      fourierDenoisingPlan: { enabled: true },
    });
    expect(raw.noiseDb).toBeCloseTo(-35, 0);
    for (const denoised of [fourier, smart, both]) {
      // Measured: fourier 19 dB, smart 26 dB, both 32 dB less noise; speech within 0.4 dB.
      expect(raw.noiseDb - denoised.noiseDb).toBeGreaterThan(15);
      expect(Math.abs(raw.speechDb - denoised.speechDb)).toBeLessThan(1);
    }
    expect(both.noiseDb).toBeLessThan(Math.min(fourier.noiseDb, smart.noiseDb));
  });

  it('a disabled plan changes nothing', async () => {
    const raw = await transcriberLevels(undefined);
    const off = await transcriberLevels({
      smartDenoisingPlan: { enabled: false },
      fourierDenoisingPlan: { enabled: false, baselineOffsetDb: -10 },
    });
    expect(off).toEqual(raw);
  });

  it('rejects a plan field out of range', () => {
    expect(
      () =>
        new PipelineDriver({
          pipeline: {
            backgroundSpeechDenoisingPlan: {
              fourierDenoisingPlan: { enabled: true, windowSizeMs: 10 },
            },
          },
        }),
    ).toThrow(/windowSizeMs/);
  });
});
