/**
 * 100 inbound SIP calls in parallel on the voice pipeline (one worker thread, energy VAD, the
 * real Deepgram, OpenAI and ElevenLabs adapters against local fakes): every call greets the
 * caller over RTP, streams the caller's pcap speech to the transcriber and ends by the caller's
 * BYE, with no failed call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endedCallsOf, runParallelSipp, useSipHarness } from '../calls/sip-call-harness.js';
import { FakeDeepgramServer } from '../support/fake-deepgram-server.js';
import { FakeOpenAiServer } from '../support/fake-openai-server.js';
import { FakeSpeechServer } from '../support/fake-voice-servers.js';
import { hasSipp } from '../support/sipp.js';

const CALLS = 100;
const model = new FakeOpenAiServer();
const deepgram = new FakeDeepgramServer();
const elevenLabs = new FakeSpeechServer('11labs', 'el-key');
beforeAll(async () => {
  await Promise.all([model.start(), deepgram.start(), elevenLabs.start()]);
});
afterAll(async () => {
  await Promise.all([model.close(), deepgram.close(), elevenLabs.stop()]);
});

const h = useSipHarness({
  pipeline: true,
  providers: () => ({
    openaiBaseUrl: model.url,
    openaiApiKey: 'sk-server',
    elevenLabsBaseUrl: elevenLabs.url,
    elevenLabsApiKey: 'el-key',
  }),
});

describe.skipIf(!hasSipp)('100 inbound SIP calls in parallel on the voice pipeline', () => {
  it('greets every caller, hears them and ends every call', { timeout: 240_000 }, async () => {
    expect(
      (
        await h.post('/credential', {
          provider: 'deepgram',
          apiKey: deepgram.apiKey,
          apiUrl: deepgram.url,
        })
      )[0],
    ).toBe(201);
    const number = '+15550009200';
    const { phoneNumberId } = await h.phoneNumber({
      number,
      assistant: {
        firstMessage: 'Hello, how can I help?',
        model: { provider: 'openai', model: 'gpt-4o-mini' },
        transcriber: { provider: 'deepgram', model: 'nova-2' },
        voice: { provider: '11labs', voiceId: 'voice-1' },
      },
    });
    const result = await runParallelSipp(h, 'parallel-pcap.xml', number, CALLS);
    expect(result.code, result.output).toBe(0);
    expect(result.peakLiveCalls).toBeGreaterThanOrEqual(CALLS * 0.9);

    const calls = await endedCallsOf(h, phoneNumberId, CALLS, 90_000);
    expect(calls).toHaveLength(CALLS);
    const reasons: Record<string, number> = {};
    for (const call of calls) {
      reasons[String(call.endedReason)] = (reasons[String(call.endedReason)] ?? 0) + 1;
    }
    expect(reasons).toEqual({ 'customer-ended-call': CALLS });
    for (const call of calls) {
      const observer = h.observers.get(String(call.id))!;
      expect(observer.audio.user, String(call.id)).toBeGreaterThan(8000 * 2);
      // The greeting was played: the fake voice's audio is not silence.
      expect(observer.energy.assistant, String(call.id)).toBeGreaterThan(0);
    }
    // Every call streamed the caller's audio to its own transcriber connection.
    expect(deepgram.connections).toHaveLength(CALLS);
    for (const connection of deepgram.connections) {
      expect(connection.audioBytes).toBeGreaterThan(16_000);
    }
  });
});
