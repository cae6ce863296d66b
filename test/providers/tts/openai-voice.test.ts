import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../../../src/providers/provider-error.js';
import { OpenAiVoice } from '../../../src/providers/tts/openai-voice.js';
import type { SynthesisRequest } from '../../../src/providers/tts/voice.js';
import { FakeSpeechServer, fakePcm } from '../../support/fake-voice-servers.js';
import { collectBytes, rejection } from './collect.js';

const server = new FakeSpeechServer('openai');
beforeAll(() => server.start());
afterAll(() => server.stop());

function request(overrides: Partial<SynthesisRequest> = {}): SynthesisRequest {
  return {
    text: 'Hello there.',
    sampleRateHz: 24_000,
    config: { provider: 'openai', voiceId: 'nova', speed: 1.25 },
    apiKey: server.apiKey,
    baseUrl: server.url,
    ...overrides,
  };
}

describe('OpenAiVoice', () => {
  const voice = new OpenAiVoice();

  it('streams exactly the PCM the vendor sent, across odd chunk borders', async () => {
    server.enqueue({ chunkDelayMs: 1 });
    const bytes = await collectBytes(voice.synthesize(request(), new AbortController().signal));
    expect(bytes).toEqual(Buffer.from(fakePcm('Hello there.', 24_000)));
    const sent = server.requests.at(-1)!;
    expect(sent.path).toBe('/v1/audio/speech');
    expect(sent.headers.authorization).toBe(`Bearer ${server.apiKey}`);
    expect(sent.body).toEqual({
      model: 'gpt-4o-mini-tts',
      input: 'Hello there.',
      voice: 'nova',
      response_format: 'pcm',
      speed: 1.25,
    });
  });

  it('uses the configured model and the constructor base URL', async () => {
    const configured = new OpenAiVoice({ baseUrl: server.url });
    const rest = request({ config: { voiceId: 'alloy', model: 'tts-1' } });
    delete rest.baseUrl;
    await collectBytes(configured.synthesize(rest, new AbortController().signal));
    expect(server.requests.at(-1)!.body.model).toBe('tts-1');
  });

  it('stops the request at once when aborted (barge-in)', async () => {
    server.enqueue({ hangAfterChunks: 4 });
    const controller = new AbortController();
    const stream = voice.synthesize(request(), controller.signal)[Symbol.asyncIterator]();
    const first = await stream.next();
    expect(first.done).toBe(false);
    const pending = stream.next();
    const reason = new Error('barge-in');
    controller.abort(reason);
    expect(await rejection(pending)).toBe(reason);
    const sent = server.requests.at(-1)!;
    await sent.closed;
    expect(sent.aborted).toBe(true);
  });

  it('rejects at once when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    const error = await rejection(collectBytes(voice.synthesize(request(), controller.signal)));
    expect((error as Error).message).toBe('gone');
  });

  it('maps a wrong key to a non-retryable 401', async () => {
    const error = await rejection(
      collectBytes(voice.synthesize(request({ apiKey: 'wrong' }), new AbortController().signal)),
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ provider: 'openai', vendorStatus: 401, retryable: false });
    expect((error as Error).message).toContain('invalid api key');
  });

  it.each([429, 500])('maps HTTP %i to a retryable error', async (status) => {
    server.enqueue({ status });
    const error = await rejection(
      collectBytes(voice.synthesize(request(), new AbortController().signal)),
    );
    expect(error).toMatchObject({ vendorStatus: status, retryable: true });
  });

  it('times out when no audio comes', async () => {
    server.enqueue({ hangBeforeAudio: true });
    const quick = new OpenAiVoice({ firstByteTimeoutMs: 50 });
    const error = await rejection(
      collectBytes(quick.synthesize(request(), new AbortController().signal)),
    );
    expect(error).toMatchObject({ code: 'ERR_PROVIDER_TIMEOUT', retryable: true });
    const sent = server.requests.at(-1)!;
    await sent.closed;
    expect(sent.aborted).toBe(true);
  });

  it('refuses rates other than 24 kHz', async () => {
    const error = await rejection(
      collectBytes(
        voice.synthesize(request({ sampleRateHz: 16_000 }), new AbortController().signal),
      ),
    );
    expect(error).toMatchObject({ code: 'ERR_BAD_REQUEST' });
  });
});
