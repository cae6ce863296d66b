/**
 * A websocket call end to end on the real voice pipeline (worker thread, src/calls/call-handlers)
 * against local fakes of the vendors: the caller streams speech, hears the first message and the
 * reply, sees the client messages, and hangs up; the call is stored as ended by the customer.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readWav } from '../../src/media/codecs/wav.js';
import {
  connect,
  useWsHarness,
  waitFor,
  type TestClient,
} from '../calls/websocket-call-harness.js';
import { dgResults, FakeDeepgramServer } from '../support/fake-deepgram-server.js';
import { FakeOpenAiServer } from '../support/fake-openai-server.js';
import { FakeSpeechServer } from '../support/fake-voice-servers.js';

const speech = readWav(
  readFileSync(new URL('../fixtures/denoise/clean-speech-16k.wav', import.meta.url)),
).samples;
/** "Thanks for calling." then 1.5 s of silence, 16 kHz. */
const utterance = new Int16Array(48_000);
utterance.set(speech.subarray(0, 1.7 * 16000));

const model = new FakeOpenAiServer();
const deepgram = new FakeDeepgramServer();
const elevenLabs = new FakeSpeechServer('11labs', 'el-key');
beforeAll(async () => {
  await Promise.all([model.start(), deepgram.start(), elevenLabs.start()]);
});
afterAll(async () => {
  await Promise.all([model.close(), deepgram.close(), elevenLabs.stop()]);
});

const h = useWsHarness({
  pipeline: true,
  providers: () => ({
    openaiBaseUrl: model.url,
    openaiApiKey: 'sk-server',
    elevenLabsBaseUrl: elevenLabs.url,
    elevenLabsApiKey: 'el-key',
  }),
});

const texts = (client: TestClient, type: string): any[] =>
  client.texts.filter((message) => message.type === type);

/** Streams 16 kHz PCM16 in odd-sized chunks at about real time. */
async function stream(client: TestClient, samples: Int16Array): Promise<void> {
  const bytes = new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength);
  const sizes = [641, 1281, 3201, 77];
  for (let offset = 0, i = 0; offset < bytes.length; i++) {
    const size = Math.min(sizes[i % sizes.length]!, bytes.length - offset);
    client.ws.send(bytes.subarray(offset, offset + size), { binary: true });
    offset += size;
    await new Promise((resolve) => setTimeout(resolve, (size / 2 / 16000) * 1000));
  }
}

describe('a websocket call on the voice pipeline', () => {
  it(
    'speaks, listens, answers and ends when the caller hangs up',
    { timeout: 60_000 },
    async () => {
      deepgram.finalizeReply = [
        dgResults('Thanks for calling.', { isFinal: true, speechFinal: true, duration: 1.2 }),
      ];
      // The org's keys: the model key from a credential (endpoint from the server's settings),
      // Deepgram's key and endpoint from a credential.
      for (const credential of [
        { provider: 'openai', apiKey: 'sk-org' },
        { provider: 'deepgram', apiKey: deepgram.apiKey, apiUrl: deepgram.url },
      ]) {
        expect((await h.post('/credential', credential))[0]).toBe(201);
      }
      const [, assistant] = await h.post('/assistant', {
        name: 'Receptionist',
        firstMessage: 'Hello, how can I help?',
        model: { provider: 'openai', model: 'gpt-4o-mini' },
        transcriber: { provider: 'deepgram', model: 'nova-2' },
        voice: { provider: '11labs', voiceId: 'voice-1' },
      });
      const call = await h.createCall({
        assistantId: assistant.id,
        transport: { provider: 'vapi.websocket' },
      });
      expect(call).toMatchObject({ type: 'vapi.websocketCall', status: 'queued' });

      const client = await connect(call.transport.websocketCallUrl);
      await waitFor(() => client.binary.length >= 1, 20_000, 'first-message audio');
      await waitFor(
        () =>
          texts(client, 'speech-update').some(
            (m) => m.role === 'assistant' && m.status === 'stopped',
          ),
        20_000,
        'the first message to finish',
      );
      expect(texts(client, 'status-update').map((m) => m.status)).toEqual([
        'ringing',
        'in-progress',
      ]);
      expect(texts(client, 'voice-input')[0]).toEqual({
        type: 'voice-input',
        input: 'Hello, how can I help?',
      });
      // 20 ms frames of PCM16 at 16 kHz (the last of an utterance may be shorter).
      expect(client.binary.slice(0, -1).every((frame) => frame.length === 640)).toBe(true);
      expect((await h.stored(call.id))?.status).toBe('in-progress');

      const framesBefore = client.binary.length;
      await stream(client, utterance);
      await waitFor(
        () =>
          texts(client, 'transcript').some(
            (m) => m.role === 'assistant' && m.transcript === 'You said: Thanks for calling.',
          ),
        20_000,
        'the reply',
      );
      expect(texts(client, 'transcript')).toContainEqual(
        expect.objectContaining({
          role: 'user',
          transcriptType: 'final',
          transcript: 'Thanks for calling.',
        }),
      );
      await waitFor(() => client.binary.length > framesBefore, 20_000, 'reply audio');
      expect(texts(client, 'conversation-update').at(-1).messagesOpenAIFormatted).toContainEqual({
        role: 'user',
        content: 'Thanks for calling.',
      });
      expect(model.requests.at(-1)?.headers.authorization).toBe('Bearer sk-org');

      client.ws.close();
      await waitFor(() => h.engine.session(call.id) === undefined, 20_000, 'the call to end');
      const ended = await h.stored(call.id);
      expect(ended).toMatchObject({ status: 'ended', endedReason: 'customer-ended-call' });
      expect(Date.parse(String(ended?.startedAt))).toBeLessThan(Date.parse(String(ended?.endedAt)));
    },
  );
});
