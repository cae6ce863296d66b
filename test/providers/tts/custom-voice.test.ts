import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../../../src/providers/provider-error.js';
import { CustomVoice } from '../../../src/providers/tts/custom-voice.js';
import type { SynthesisRequest } from '../../../src/providers/tts/voice.js';
import { FakeSpeechServer, fakePcm } from '../../support/fake-voice-servers.js';
import { collectBytes, rejection } from './collect.js';

const server = new FakeSpeechServer('custom-voice');
beforeAll(() => server.start());
afterAll(() => server.stop());

function request(overrides: Partial<SynthesisRequest> = {}): SynthesisRequest {
  return {
    text: 'Custom words.',
    sampleRateHz: 8000,
    config: {
      provider: 'custom-voice',
      server: { url: server.url, secret: 's3cret', headers: { 'X-Tenant': 'acme' } },
    },
    apiKey: null,
    ...overrides,
  };
}

describe('CustomVoice', () => {
  const voice = new CustomVoice();

  it('posts a voice-request and streams back exactly the raw PCM', async () => {
    server.enqueue({ chunkDelayMs: 1 });
    const bytes = await collectBytes(voice.synthesize(request(), new AbortController().signal));
    expect(bytes).toEqual(Buffer.from(fakePcm('Custom words.', 8000)));
    const sent = server.requests.at(-1)!;
    expect(sent.body).toEqual({
      message: { type: 'voice-request', text: 'Custom words.', sampleRate: 8000 },
    });
    expect(sent.headers['x-vapi-secret']).toBe('s3cret');
    expect(sent.headers['x-tenant']).toBe('acme');
    expect(sent.headers['content-type']).toBe('application/json');
  });

  it('stops the request at once when aborted (barge-in)', async () => {
    server.enqueue({ hangAfterChunks: 4 });
    const controller = new AbortController();
    const stream = voice.synthesize(request(), controller.signal)[Symbol.asyncIterator]();
    expect((await stream.next()).done).toBe(false);
    const pending = stream.next();
    controller.abort(new Error('barge-in'));
    expect(((await rejection(pending)) as Error).message).toBe('barge-in');
    const sent = server.requests.at(-1)!;
    await sent.closed;
    expect(sent.aborted).toBe(true);
  });

  it.each([
    [401, false],
    [429, true],
    [500, true],
  ])('maps HTTP %i (retryable: %s)', async (status, retryable) => {
    server.enqueue({ status });
    const error = await rejection(
      collectBytes(voice.synthesize(request(), new AbortController().signal)),
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ provider: 'custom-voice', vendorStatus: status, retryable });
  });

  it('needs a server URL', async () => {
    const error = await rejection(
      collectBytes(voice.synthesize(request({ config: {} }), new AbortController().signal)),
    );
    expect(error).toMatchObject({ code: 'ERR_BAD_REQUEST' });
  });
});
