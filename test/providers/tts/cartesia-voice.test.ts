import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../../../src/providers/provider-error.js';
import { CartesiaVoice } from '../../../src/providers/tts/cartesia-voice.js';
import type { SynthesisRequest } from '../../../src/providers/tts/voice.js';
import { FakeCartesiaServer, fakePcm } from '../../support/fake-voice-servers.js';
import { collectBytes, rejection } from './collect.js';

const server = new FakeCartesiaServer();
beforeAll(() => server.start());
afterAll(() => server.stop());

function request(overrides: Partial<SynthesisRequest> = {}): SynthesisRequest {
  return {
    text: 'Sonic speech here.',
    sampleRateHz: 16_000,
    config: { provider: 'cartesia', voiceId: 'voice-abc', model: 'sonic-english', language: 'en' },
    apiKey: server.apiKey,
    baseUrl: server.url,
    ...overrides,
  };
}

describe('CartesiaVoice', () => {
  const voice = new CartesiaVoice();

  it.each([8000, 16_000, 24_000, 44_100, 48_000])(
    'streams exactly the PCM the vendor sent at %i Hz',
    async (rate) => {
      server.enqueue({ chunkDelayMs: 1 });
      const stream = voice.synthesize(
        request({ sampleRateHz: rate }),
        new AbortController().signal,
      );
      expect(await collectBytes(stream)).toEqual(Buffer.from(fakePcm('Sonic speech here.', rate)));
      const sent = server.requests.at(-1)!;
      expect(sent.query.get('api_key')).toBe(server.apiKey);
      expect(sent.query.get('cartesia_version')).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(sent.message).toEqual({
        model_id: 'sonic-english',
        transcript: 'Sonic speech here.',
        voice: { mode: 'id', id: 'voice-abc' },
        output_format: { container: 'raw', encoding: 'pcm_s16le', sample_rate: rate },
        language: 'en',
        context_id: expect.any(String),
        continue: false,
      });
      await sent.closed;
      expect(sent.aborted).toBe(false);
    },
  );

  it('closes the socket at once when aborted (barge-in)', async () => {
    server.enqueue({ hangAfterChunks: 4 });
    const controller = new AbortController();
    const stream = voice.synthesize(request(), controller.signal)[Symbol.asyncIterator]();
    expect((await stream.next()).done).toBe(false);
    const reason = new Error('barge-in');
    controller.abort(reason);
    // Chunks already received are dropped too: the next read fails with the abort reason.
    expect(await rejection(stream.next())).toBe(reason);
    const sent = server.requests.at(-1)!;
    await sent.closed;
    expect(sent.aborted).toBe(true);
  });

  it('aborts a connection still waiting for audio', async () => {
    server.enqueue({ hangBeforeAudio: true });
    const controller = new AbortController();
    const before = server.requests.length;
    const pending = collectBytes(voice.synthesize(request(), controller.signal));
    // Abort once the vendor has the request (no timing involved).
    while (server.requests[before]?.message === undefined) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    controller.abort(new Error('barge-in'));
    expect(((await rejection(pending)) as Error).message).toBe('barge-in');
    const sent = server.requests.at(-1)!;
    await sent.closed;
    expect(sent.aborted).toBe(true);
  });

  it('closes the socket when the consumer stops reading', async () => {
    server.enqueue({ hangAfterChunks: 4 });
    for await (const chunk of voice.synthesize(request(), new AbortController().signal)) {
      expect(chunk.length).toBeGreaterThan(0);
      break;
    }
    const sent = server.requests.at(-1)!;
    await sent.closed;
    expect(sent.aborted).toBe(true);
  });

  it('maps a rejected key to a non-retryable 401', async () => {
    const error = await rejection(
      collectBytes(voice.synthesize(request({ apiKey: 'bad' }), new AbortController().signal)),
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ provider: 'cartesia', vendorStatus: 401, retryable: false });
  });

  it.each([429, 500])('maps an upgrade answered %i to a retryable error', async (status) => {
    server.enqueue({ status });
    const error = await rejection(
      collectBytes(voice.synthesize(request(), new AbortController().signal)),
    );
    expect(error).toMatchObject({ vendorStatus: status, retryable: true });
  });

  it('maps an error message to a ProviderError with its status', async () => {
    server.enqueue({ wireError: 'voice not found' });
    const error = await rejection(
      collectBytes(voice.synthesize(request(), new AbortController().signal)),
    );
    expect(error).toMatchObject({ vendorStatus: 400, retryable: false });
    expect((error as Error).message).toContain('voice not found');
  });

  it('times out when no audio comes', async () => {
    server.enqueue({ hangBeforeAudio: true });
    const quick = new CartesiaVoice({ firstByteTimeoutMs: 50 });
    const error = await rejection(
      collectBytes(quick.synthesize(request(), new AbortController().signal)),
    );
    expect(error).toMatchObject({ code: 'ERR_PROVIDER_TIMEOUT', retryable: true });
    const sent = server.requests.at(-1)!;
    await sent.closed;
    expect(sent.aborted).toBe(true);
  });
});
