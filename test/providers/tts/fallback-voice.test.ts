import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../../../src/providers/provider-error.js';
import {
  type FallbackEvent,
  FallbackVoice,
  voiceFor,
} from '../../../src/providers/tts/fallback-voice.js';
import { createVoiceRegistry } from '../../../src/providers/tts/registry.js';
import type { SynthesisRequest, Voice } from '../../../src/providers/tts/voice.js';
import { FakeSpeechServer, fakePcm } from '../../support/fake-voice-servers.js';
import { collectBytes, rejection } from './collect.js';

const openai = new FakeSpeechServer('openai', 'openai-key');
const elevenLabs = new FakeSpeechServer('11labs', 'eleven-key');
beforeAll(async () => {
  await openai.start();
  await elevenLabs.start();
});
afterAll(async () => {
  await openai.stop();
  await elevenLabs.stop();
});

function registry(): ReturnType<typeof createVoiceRegistry> {
  return createVoiceRegistry({
    openaiBaseUrl: openai.url,
    openaiApiKey: 'openai-key',
    elevenLabsBaseUrl: elevenLabs.url,
  });
}

describe('fallback voices', () => {
  it('hands over to the next voice when the first fails before any audio', async () => {
    openai.enqueue({ status: 500 });
    const config = {
      provider: 'openai',
      voiceId: 'alloy',
      fallbackPlan: { voices: [{ provider: '11labs', voiceId: 'backup' }] },
    };
    const events: FallbackEvent[] = [];
    const voice = voiceFor(
      registry(),
      config,
      (voiceConfig) => ({
        apiKey: voiceConfig['provider'] === '11labs' ? 'eleven-key' : null,
      }),
      (event) => events.push(event),
    )!;
    expect(voice).toBeInstanceOf(FallbackVoice);
    expect(voice.capabilities.sampleRatesHz).toEqual([24_000]);
    const request: SynthesisRequest = {
      text: 'Fall back please.',
      sampleRateHz: 24_000,
      config,
      apiKey: 'openai-key',
    };
    const bytes = await collectBytes(voice.synthesize(request, new AbortController().signal));
    expect(bytes).toEqual(Buffer.from(fakePcm('Fall back please.', 24_000)));
    expect(elevenLabs.requests.at(-1)!.path).toBe('/v1/text-to-speech/backup/stream');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ index: 0, provider: 'openai' });
    expect(events[0]!.error).toMatchObject({ vendorStatus: 500 });
  });

  it('resamples a fallback voice that cannot make the requested rate', async () => {
    elevenLabs.enqueue({ status: 429 });
    const config = {
      provider: '11labs',
      voiceId: 'first',
      fallbackPlan: { voices: [{ provider: 'unknown' }, { provider: 'openai', voiceId: 'echo' }] },
    };
    const voice = voiceFor(registry(), config)!;
    const request: SynthesisRequest = {
      text: 'Resample me.',
      sampleRateHz: 16_000,
      config,
      apiKey: 'eleven-key',
    };
    const bytes = await collectBytes(voice.synthesize(request, new AbortController().signal));
    const source = fakePcm('Resample me.', 24_000).length / 2;
    // 24 kHz → 16 kHz: two output samples for every three input samples.
    expect(bytes.length / 2).toBe(Math.ceil((source * 2) / 3));
    expect(openai.requests.at(-1)!.headers.authorization).toBe('Bearer openai-key');
  });

  it('throws the last error when every voice fails', async () => {
    openai.enqueue({ status: 500 });
    elevenLabs.enqueue({ status: 401 });
    const config = {
      provider: 'openai',
      fallbackPlan: { voices: [{ provider: '11labs', voiceId: 'x' }] },
    };
    const voice = voiceFor(registry(), config, () => ({ apiKey: 'eleven-key' }))!;
    const error = await rejection(
      collectBytes(
        voice.synthesize(
          { text: 'No luck.', sampleRateHz: 24_000, config, apiKey: 'openai-key' },
          new AbortController().signal,
        ),
      ),
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ provider: '11labs', vendorStatus: 401 });
  });

  it('does not fall over once audio has flowed, nor after an abort', async () => {
    let secondCalls = 0;
    const failing: Voice = {
      name: 'first',
      capabilities: { streamingOutput: true, sampleRatesHz: [16_000] },
      // eslint-disable-next-line @typescript-eslint/require-await
      async *synthesize() {
        yield new Int16Array([1, 2, 3]);
        throw new ProviderError('first', 'broke mid-sentence', 500);
      },
    };
    const second: Voice = {
      name: 'second',
      capabilities: { streamingOutput: true, sampleRatesHz: [16_000] },
      // eslint-disable-next-line @typescript-eslint/require-await
      async *synthesize() {
        secondCalls++;
        yield new Int16Array([9]);
      },
    };
    const config = { provider: 'first', fallbackPlan: { voices: [{ provider: 'second' }] } };
    const voice = new FallbackVoice(
      failing,
      { get: (name) => (name === 'second' ? second : undefined) },
      () => ({ apiKey: null }),
    );
    const request: SynthesisRequest = { text: 'x', sampleRateHz: 16_000, config, apiKey: null };
    const chunks: Int16Array[] = [];
    const error = await rejection(
      (async () => {
        for await (const chunk of voice.synthesize(request, new AbortController().signal)) {
          chunks.push(chunk);
        }
      })(),
    );
    expect((error as Error).message).toContain('broke mid-sentence');
    expect(chunks).toEqual([new Int16Array([1, 2, 3])]);
    expect(secondCalls).toBe(0);

    const controller = new AbortController();
    controller.abort(new Error('barge-in'));
    const aborted = await rejection(collectBytes(voice.synthesize(request, controller.signal)));
    expect((aborted as Error).message).toBe('barge-in');
    expect(secondCalls).toBe(0);
  });

  it('returns the plain adapter without a fallback plan, undefined for unknown providers', () => {
    const voices = registry();
    expect(voiceFor(voices, { provider: 'cartesia' })).toBe(voices.get('cartesia'));
    expect(voiceFor(voices, { provider: 'nope' })).toBeUndefined();
  });
});

describe('createVoiceRegistry', () => {
  it('serves the four providers and OpenAI defaults', () => {
    const voices = registry();
    expect(
      ['openai', '11labs', 'cartesia', 'custom-voice'].map((name) => voices.get(name)?.name),
    ).toEqual(['openai', '11labs', 'cartesia', 'custom-voice']);
    expect(voices.defaults('openai')).toEqual({ baseUrl: openai.url, apiKey: 'openai-key' });
    expect(voices.defaults('11labs')).toEqual({});
    expect(createVoiceRegistry().defaults('openai')).toEqual({
      baseUrl: 'https://api.openai.com/v1',
    });
  });
});
