/**
 * The speech of an assistant-request error (synthesizeAnnouncement) against a local fake of
 * OpenAI's speech endpoint, with a real store and CallParamsBuilder: the key it finds, the 8 kHz
 * audio it returns, and its bounds (no key, the synthesis deadline, the audio cap, a cancel).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CallParamsBuilder } from '../../src/calls/call-params-builder.js';
import {
  NO_PROVIDER_DEFAULTS,
  type ProviderServerSettings,
} from '../../src/calls/pipeline-call-params.js';
import { synthesizeAnnouncement } from '../../src/calls/sip-inbound-announcement.js';
import type { Store } from '../../src/store/store.js';
import { fakePcm, FakeSpeechServer } from '../support/fake-voice-servers.js';
import { storeTargets } from '../support/store-targets.js';

const tts = new FakeSpeechServer('openai', 'sk-server');
let store: Store;
let cleanup: () => Promise<void> = () => Promise.resolve();
beforeAll(async () => {
  await tts.start();
  const opened = await storeTargets()[0]!.open();
  store = opened.store;
  cleanup = opened.cleanup;
});
afterAll(async () => {
  await tts.stop();
  await cleanup();
});

function builderWith(providers: Partial<ProviderServerSettings>): CallParamsBuilder {
  return new CallParamsBuilder(store, {
    providers: { ...NO_PROVIDER_DEFAULTS, ...providers },
    vad: 'energy',
  });
}

const serverKey = (): CallParamsBuilder =>
  builderWith({ openaiBaseUrl: tts.url, openaiApiKey: 'sk-server' });

async function speak(
  builder: CallParamsBuilder,
  text: string,
  more: { orgId?: string; deadlineMs?: number; maxAudioMs?: number; signal?: AbortSignal } = {},
): Promise<Int16Array> {
  return synthesizeAnnouncement({
    builder,
    orgId: more.orgId ?? (await store.keys.createOrg('announcement')),
    callId: 'call-1',
    text,
    signal: more.signal ?? new AbortController().signal,
    ...(more.deadlineMs !== undefined && { deadlineMs: more.deadlineMs }),
    ...(more.maxAudioMs !== undefined && { maxAudioMs: more.maxAudioMs }),
  });
}

describe('synthesizeAnnouncement', () => {
  it("speaks with the server's OpenAI key and alloy, resampled to 8 kHz", async () => {
    const before = tts.requests.length;
    const audio = await speak(serverKey(), 'We are closed');
    const request = tts.requests[before]!;
    expect(request.headers.authorization).toBe('Bearer sk-server');
    expect(request.body).toMatchObject({ input: 'We are closed', voice: 'alloy' });
    // 24 kHz in, a third as many samples out.
    expect(audio.length).toBe(Math.ceil(fakePcm('We are closed', 24_000).length / 2 / 3));
    expect(audio.some((sample) => Math.abs(sample) > 1000)).toBe(true);
  });

  it("prefers the org's own openai credential and its endpoint", async () => {
    const orgTts = new FakeSpeechServer('openai', 'sk-org');
    await orgTts.start();
    try {
      const orgId = await store.keys.createOrg('own-key');
      await store.resources.credentials.create(orgId, {
        provider: 'openai',
        apiKey: 'sk-org',
        baseUrl: orgTts.url,
      });
      const before = tts.requests.length;
      const audio = await speak(serverKey(), 'Closed', { orgId });
      expect(audio.length).toBeGreaterThan(0);
      expect(orgTts.requests.map((request) => request.headers.authorization)).toEqual([
        'Bearer sk-org',
      ]);
      expect(tts.requests.length).toBe(before);
    } finally {
      await orgTts.stop();
    }
  });

  it('fails with ERR_CONFIG and sends nothing when there is no key', async () => {
    const before = tts.requests.length;
    await expect(speak(builderWith({ openaiBaseUrl: tts.url }), 'Closed')).rejects.toMatchObject({
      code: 'ERR_CONFIG',
    });
    expect(tts.requests.length).toBe(before);
  });

  it("fails with the vendor's error", async () => {
    tts.enqueue({ status: 500 });
    await expect(speak(serverKey(), 'Closed')).rejects.toMatchObject({ code: 'ERR_PROVIDER' });
  });

  it('gives up at the deadline and drops the request', async () => {
    tts.enqueue({ firstByteDelayMs: 5000 });
    const before = tts.requests.length;
    await expect(speak(serverKey(), 'Closed', { deadlineMs: 200 })).rejects.toMatchObject({
      code: 'ERR_PROVIDER_TIMEOUT',
    });
    await tts.requests[before]!.closed;
    expect(tts.requests[before]!.aborted).toBe(true);
  });

  it('cuts the speech at the audio cap', async () => {
    const text = 'x'.repeat(1000);
    expect(fakePcm(text, 24_000).length / 2 / 3).toBeGreaterThan(8000);
    const audio = await speak(serverKey(), text, { maxAudioMs: 500 });
    expect(audio.length).toBe(4000);
  });

  it('stops when the caller cancels, with the signal reason', async () => {
    tts.enqueue({ firstByteDelayMs: 5000 });
    const cancel = new AbortController();
    const before = tts.requests.length;
    const spoken = speak(serverKey(), 'Closed', { signal: cancel.signal });
    await expect.poll(() => tts.requests.length).toBe(before + 1);
    cancel.abort(new Error('cancelled'));
    await expect(spoken).rejects.toThrow('cancelled');
    await tts.requests[before]!.closed;
    expect(tts.requests[before]!.aborted).toBe(true);
  });
});
