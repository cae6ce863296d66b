import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../../../src/providers/provider-error.js';
import { ElevenLabsVoice } from '../../../src/providers/tts/elevenlabs-voice.js';
import type { SynthesisRequest } from '../../../src/providers/tts/voice.js';
import { FakeSpeechServer, fakePcm } from '../../support/fake-voice-servers.js';
import { collectBytes, rejection } from './collect.js';

const server = new FakeSpeechServer('11labs');
beforeAll(() => server.start());
afterAll(() => server.stop());

function request(overrides: Partial<SynthesisRequest> = {}): SynthesisRequest {
  return {
    text: 'Good morning, how can I help?',
    sampleRateHz: 16_000,
    config: {
      provider: '11labs',
      voiceId: 'voice 1',
      model: 'eleven_flash_v2_5',
      stability: 0.4,
      similarityBoost: 0.8,
      useSpeakerBoost: true,
      optimizeStreamingLatency: 3,
    },
    apiKey: server.apiKey,
    baseUrl: server.url,
    ...overrides,
  };
}

describe('ElevenLabsVoice', () => {
  const voice = new ElevenLabsVoice();

  it.each([16_000, 22_050, 24_000, 44_100])(
    'streams exactly the PCM the vendor sent at %i Hz',
    async (rate) => {
      server.enqueue({ chunkDelayMs: 1 });
      const stream = voice.synthesize(
        request({ sampleRateHz: rate }),
        new AbortController().signal,
      );
      expect(await collectBytes(stream)).toEqual(
        Buffer.from(fakePcm('Good morning, how can I help?', rate)),
      );
      const sent = server.requests.at(-1)!;
      expect(sent.path).toBe('/v1/text-to-speech/voice%201/stream');
      expect(sent.query.get('output_format')).toBe(`pcm_${rate}`);
      expect(sent.query.get('optimize_streaming_latency')).toBe('3');
      expect(sent.headers['xi-api-key']).toBe(server.apiKey);
      expect(sent.body).toEqual({
        text: 'Good morning, how can I help?',
        model_id: 'eleven_flash_v2_5',
        voice_settings: { stability: 0.4, similarity_boost: 0.8, use_speaker_boost: true },
      });
    },
  );

  it('defaults the model and leaves out absent settings', async () => {
    await collectBytes(
      voice.synthesize(request({ config: { voiceId: 'v' } }), new AbortController().signal),
    );
    expect(server.requests.at(-1)!.body).toEqual({
      text: 'Good morning, how can I help?',
      model_id: 'eleven_turbo_v2_5',
    });
  });

  it('stops the request at once when aborted (barge-in)', async () => {
    server.enqueue({ hangAfterChunks: 4 });
    const controller = new AbortController();
    const stream = voice.synthesize(request(), controller.signal)[Symbol.asyncIterator]();
    expect((await stream.next()).done).toBe(false);
    const pending = stream.next();
    const reason = new Error('barge-in');
    controller.abort(reason);
    expect(await rejection(pending)).toBe(reason);
    const sent = server.requests.at(-1)!;
    await sent.closed;
    expect(sent.aborted).toBe(true);
  });

  it('releases the request when the consumer stops reading', async () => {
    server.enqueue({ hangAfterChunks: 4 });
    for await (const chunk of voice.synthesize(request(), new AbortController().signal)) {
      expect(chunk.length).toBeGreaterThan(0);
      break;
    }
    const sent = server.requests.at(-1)!;
    await sent.closed;
    expect(sent.aborted).toBe(true);
  });

  it('maps a wrong key to a non-retryable 401 with the vendor message', async () => {
    const error = await rejection(
      collectBytes(voice.synthesize(request({ apiKey: 'nope' }), new AbortController().signal)),
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ provider: '11labs', vendorStatus: 401, retryable: false });
    expect((error as Error).message).toContain('invalid api key');
  });

  it.each([429, 500])('maps HTTP %i to a retryable error', async (status) => {
    server.enqueue({ status });
    const error = await rejection(
      collectBytes(voice.synthesize(request(), new AbortController().signal)),
    );
    expect(error).toMatchObject({ vendorStatus: status, retryable: true });
  });

  it('refuses a rate it has no PCM format for, and a missing voice id', async () => {
    for (const bad of [request({ sampleRateHz: 48_000 }), request({ config: {} })]) {
      const error = await rejection(
        collectBytes(voice.synthesize(bad, new AbortController().signal)),
      );
      expect(error).toMatchObject({ code: 'ERR_BAD_REQUEST' });
    }
  });
});
