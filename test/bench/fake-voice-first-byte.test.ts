/**
 * The voice simulator's time to first byte (test/support/fake-voice-servers.ts) and what the
 * harness subtracts for it (self-parla.ts expectedLatencyMs).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedLatencyMs, VAD_STOP_HOLD_MS } from '../../bench/harness/self-parla.js';
import { fakePcm, FakeSpeechServer } from '../../test/support/fake-voice-servers.js';

const voice = new FakeSpeechServer('11labs', 'key');
beforeAll(() => voice.start());
afterAll(() => voice.stop());

/** One speech request; resolves with the ms from sending to the first body byte, and the bytes. */
async function speak(text: string): Promise<{ firstByteMs: number; bytes: number }> {
  const startedMs = performance.now();
  const response = await fetch(`${voice.url}/v1/text-to-speech/v/stream?output_format=pcm_16000`, {
    method: 'POST',
    headers: { 'xi-api-key': 'key', 'content-type': 'application/json' },
    body: JSON.stringify({ text }),
  });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  let firstByteMs = -1;
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) {
      break;
    }
    if (firstByteMs < 0 && value.length > 0) {
      firstByteMs = performance.now() - startedMs;
    }
    bytes += value.length;
  }
  return { firstByteMs, bytes };
}

describe('FakeSpeechServer time to first byte', () => {
  it('sends audio at once by default (the behaviour other tests rely on)', async () => {
    const { bytes } = await speak('hello there');
    expect(bytes).toBe(fakePcm('hello there', 16_000).length);
    expect(voice.firstByteDelaysMs.at(-1)).toBe(0);
  });

  it('waits delay + U(0, jitter) before the first byte, drawn per reply', async () => {
    const draws = [0.5, 0.25];
    voice.firstByteDelayMs = 150;
    voice.firstByteJitterMs = 100;
    voice.random = () => draws.shift() ?? 0;
    try {
      const first = await speak('one');
      const second = await speak('two');
      expect(voice.firstByteDelaysMs.slice(-2)).toEqual([200, 175]);
      // Lower bounds only: on a loaded machine the upper side is anyone's guess.
      expect(first.firstByteMs).toBeGreaterThanOrEqual(195);
      expect(second.firstByteMs).toBeGreaterThanOrEqual(170);
      expect(second.bytes).toBe(fakePcm('two', 16_000).length);
    } finally {
      voice.firstByteDelayMs = 0;
      voice.firstByteJitterMs = 0;
      voice.random = Math.random;
    }
  });

  it('lets one scripted reply set its own delay', async () => {
    voice.firstByteDelayMs = 5000;
    voice.enqueue({ firstByteDelayMs: 60 });
    try {
      const { firstByteMs } = await speak('scripted');
      expect(voice.firstByteDelaysMs.at(-1)).toBe(60);
      expect(firstByteMs).toBeGreaterThanOrEqual(55);
    } finally {
      voice.firstByteDelayMs = 0;
    }
  });
});

describe('expectedLatencyMs (what a --self run subtracts)', () => {
  it('is the VAD hold plus each simulated vendor latency and the mean of its jitter', () => {
    expect(expectedLatencyMs({ transcriberMs: 150, modelMs: 200, jitterMs: 0 })).toBe(
      VAD_STOP_HOLD_MS + 350,
    );
    expect(
      expectedLatencyMs({ transcriberMs: 150, modelMs: 200, voiceMs: 100, jitterMs: 40 }),
    ).toBe(VAD_STOP_HOLD_MS + 150 + 200 + 100 + 3 * 20);
  });
});
