/**
 * A whole websocket conversation as a developer would run it, on the real stack (control plane,
 * call engine, worker thread running the voice pipeline, uWS transport, the reporting side that
 * main.ts wires in) against local fakes of Deepgram, OpenAI and ElevenLabs and a webhook receiver
 * that fails its first attempts. The caller streams espeak-ng speech in real time, hears the
 * first message and the answer as paced audio, barges in mid-answer (the audio stops and a
 * `clear` comes), and ends the call; then the stored call has its reason, artifact, recording
 * (downloaded through the files API) and costs, and the webhooks arrived in order after retries.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { CallEngine } from '../../src/calls/call-engine.js';
import { CallParamsBuilder } from '../../src/calls/call-params-builder.js';
import { createCallReporter } from '../../src/calls/reporting/call-reporter.js';
import { loadPriceTable } from '../../src/calls/reporting/price-table.js';
import { WebsocketCallStarter } from '../../src/calls/websocket-call-starter.js';
import { buildApp } from '../../src/control/app.js';
import { readWav } from '../../src/media/codecs/wav.js';
import type { Store } from '../../src/store/store.js';
import { WebsocketServer } from '../../src/transports/websocket/websocket-server.js';
import { WorkerHost } from '../../src/workers/host.js';
import { waitFor } from '../calls/websocket-call-harness.js';
import { dgResults, FakeDeepgramServer } from '../support/fake-deepgram-server.js';
import { FakeOpenAiServer } from '../support/fake-openai-server.js';
import { FakeSpeechServer } from '../support/fake-voice-servers.js';
import { storeTargets } from '../support/store-targets.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

const RATE_HZ = 16_000;
const FRAME_SAMPLES = 320;
const FRAME_MS = 20;
const fixture = (name: string): Int16Array =>
  readWav(readFileSync(new URL(`../../bench/fixtures/callers/${name}`, import.meta.url))).samples;
/** "I'd like to book a table for two tonight" (3.8 s) and "Actually, make it four" (2.2 s). */
const bookTable = fixture('f1-book-table.wav');
const actuallyFour = fixture('f1-actually-four.wav');

/** The answer the barge-in cuts: 24 sentences, about 5 s of the fake voice's audio. */
const LONG_ANSWER = Array.from(
  { length: 24 },
  (_, i) => `Sentence ${i + 1} of a long answer about our tables and opening hours. `,
);

/** Everything the socket delivered, in order, stamped on arrival. */
type Received =
  { kind: 'audio'; atMs: number; bytes: number } | { kind: 'text'; atMs: number; message: any };

/** A microphone: one 20 ms PCM16 frame per tick, on a drift-free grid; speech when queued. */
class Microphone {
  readonly #ws: WebSocket;
  readonly #queue: { samples: Int16Array; done: () => void }[] = [];
  #offset = 0;
  #frame = 0;
  #timer: NodeJS.Timeout | null = null;
  readonly #startMs = performance.now();

  constructor(ws: WebSocket) {
    this.#ws = ws;
    this.#tick();
  }

  say(samples: Int16Array): Promise<void> {
    return new Promise((resolve) => this.#queue.push({ samples, done: resolve }));
  }

  stop(): void {
    if (this.#timer !== null) {
      clearTimeout(this.#timer);
    }
    this.#timer = null;
  }

  #tick(): void {
    const due = Math.floor((performance.now() - this.#startMs) / FRAME_MS);
    while (this.#frame <= due && this.#ws.readyState === WebSocket.OPEN) {
      const frame = new Int16Array(FRAME_SAMPLES);
      const current = this.#queue[0];
      if (current !== undefined) {
        const part = current.samples.subarray(this.#offset, this.#offset + FRAME_SAMPLES);
        frame.set(part);
        this.#offset += part.length;
        if (this.#offset >= current.samples.length) {
          this.#queue.shift();
          this.#offset = 0;
          current.done();
        }
      }
      this.#ws.send(frame, { binary: true });
      this.#frame += 1;
    }
    const nextMs = this.#startMs + this.#frame * FRAME_MS - performance.now();
    this.#timer = setTimeout(() => this.#tick(), Math.max(0, nextMs));
  }
}

const model = new FakeOpenAiServer();
const deepgram = new FakeDeepgramServer();
const elevenLabs = new FakeSpeechServer('11labs', 'el-key');
let receiver: WebhookReceiver;
let store: Store;
let app: FastifyInstance;
let engine: CallEngine;
let wsServer: WebsocketServer;
let host: WorkerHost;
let key: string;
let cleanupStore: () => Promise<void> = () => Promise.resolve();

beforeAll(async () => {
  await Promise.all([model.start(), deepgram.start(), elevenLabs.start()]);
  receiver = await WebhookReceiver.start();
  const opened = await storeTargets()[0]!.open();
  cleanupStore = opened.cleanup;
  store = opened.store;
  const orgId = await store.keys.createOrg('conversation-org');
  key = (await store.keys.createKey(orgId, 'test')).key;
  const filesDir = join(opened.dataDir, 'files');
  const prices = loadPriceTable();
  host = new WorkerHost({ threads: 1 });
  wsServer = new WebsocketServer({
    registry: {
      claimTransport: (...a) => engine.claimTransport(...a),
      claimListen: (...a) => engine.claimListen(...a),
    },
  });
  const wsPort = await wsServer.listen('127.0.0.1', 0);
  engine = new CallEngine({
    store,
    host,
    publicUrl: 'http://parla.test',
    wsPublicUrl: `ws://127.0.0.1:${wsPort}`,
    connectTimeoutMs: 20_000,
    observerFactory: (call, params) =>
      createCallReporter({
        orgId: params.orgId,
        call,
        assistant: params.assistant,
        variableValues: params.variableValues,
        callParams: params,
        store,
        filesDir,
        publicUrl: 'http://parla.test',
        prices,
      }),
  });
  const builder = new CallParamsBuilder(store, {
    providers: {
      openaiBaseUrl: model.url,
      openaiApiKey: 'sk-server',
      anthropicBaseUrl: '',
      anthropicApiKey: '',
      deepgramBaseUrl: deepgram.url,
      deepgramApiKey: deepgram.apiKey,
      elevenLabsBaseUrl: elevenLabs.url,
      elevenLabsApiKey: 'el-key',
      cartesiaBaseUrl: '',
      cartesiaApiKey: '',
    },
    vad: 'energy',
  });
  app = await buildApp({
    store,
    publicUrl: 'http://parla.test',
    filesDir,
    callStarter: new WebsocketCallStarter(store, engine, builder),
    liveCalls: engine,
  });
  await app.ready();
});

afterAll(async () => {
  await engine?.close({ endTimeoutMs: 3000 });
  wsServer?.close();
  await host?.close();
  await app?.close();
  await cleanupStore();
  await receiver?.close();
  await Promise.all([model.close(), deepgram.close(), elevenLabs.stop()]);
});

async function api(method: 'GET' | 'POST', url: string, body?: object) {
  const response = await app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${key}` },
    ...(body === undefined ? {} : { payload: body }),
  });
  return response;
}

describe('a websocket conversation end to end', () => {
  it(
    'streams speech, hears paced answers, barges in, ends, and reports everything',
    { timeout: 120_000 },
    async () => {
      // The receiver fails the first two attempts; the backoff plan retries them.
      receiver.respond((_request, index) => (index < 2 ? { status: 503 } : { status: 200 }));
      const assistantResponse = await api('POST', '/assistant', {
        name: 'Bookings',
        firstMessage: 'Hello, this is the restaurant.',
        model: {
          provider: 'openai',
          model: 'gpt-4o-mini',
          messages: [{ role: 'system', content: 'You take table bookings.' }],
        },
        transcriber: { provider: 'deepgram', model: 'nova-2' },
        voice: { provider: '11labs', voiceId: 'voice-1' },
        startSpeakingPlan: { waitSeconds: 0 },
        stopSpeakingPlan: { voiceSeconds: 0.2 },
        server: {
          url: `${receiver.url}/hooks`,
          backoffPlan: { type: 'fixed', maxRetries: 3, baseDelaySeconds: 0.05 },
        },
        serverMessages: ['status-update', 'user-interrupted', 'end-of-call-report'],
      });
      expect(assistantResponse.statusCode).toBe(201);
      const assistant = assistantResponse.json();

      const created = await api('POST', '/call', {
        assistantId: assistant.id,
        transport: {
          provider: 'parla.websocket',
          audioFormat: { format: 'pcm_s16le', container: 'raw', sampleRate: RATE_HZ },
        },
      });
      expect(created.statusCode).toBe(201);
      const call = created.json();
      expect(call).toMatchObject({ type: 'parla.websocketCall', status: 'queued' });

      const ws = new WebSocket(call.transport.websocketCallUrl);
      const received: Received[] = [];
      ws.on('message', (data: Buffer, isBinary) => {
        const atMs = performance.now();
        received.push(
          isBinary
            ? { kind: 'audio', atMs, bytes: data.length }
            : { kind: 'text', atMs, message: JSON.parse(data.toString('utf8')) },
        );
      });
      await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
      const socketOpenedAtMs = Date.now();
      const mic = new Microphone(ws);
      const texts = (type: string) =>
        received.flatMap((r) => (r.kind === 'text' && r.message.type === type ? [r.message] : []));
      const indexOf = (from: number, test: (r: Received) => boolean): number =>
        received.findIndex((r, i) => i >= from && test(r));
      const assistantSpeech = (status: string) => (r: Received) =>
        r.kind === 'text' &&
        r.message.type === 'speech-update' &&
        r.message.role === 'assistant' &&
        r.message.status === status;

      // The first message plays, then stops.
      await waitFor(
        () => indexOf(0, assistantSpeech('stopped')) >= 0,
        30_000,
        'the first message to be spoken',
      );
      expect(texts('voice-input')[0]).toEqual({
        type: 'voice-input',
        input: 'Hello, this is the restaurant.',
      });

      // The caller asks; the answer is long enough to be interrupted.
      deepgram.finalizeReply = [
        dgResults('I would like to book a table for two tonight.', {
          isFinal: true,
          speechFinal: true,
          duration: 3.8,
        }),
      ];
      model.enqueue(
        { chunks: LONG_ANSWER, usage: { prompt_tokens: 40, completion_tokens: 300 } },
        { chunks: ['Four people, noted.'], usage: { prompt_tokens: 60, completion_tokens: 5 } },
      );
      const askedAt = received.length;
      await mic.say(bookTable);
      await waitFor(
        () => indexOf(askedAt, assistantSpeech('started')) >= 0,
        30_000,
        'the answer to start',
      );
      expect(
        received.some(
          (r, i) =>
            i >= askedAt &&
            r.kind === 'text' &&
            r.message.type === 'transcript' &&
            r.message.role === 'user' &&
            r.message.transcriptType === 'final' &&
            r.message.transcript === 'I would like to book a table for two tonight.',
        ),
      ).toBe(true);
      expect(
        received.some(
          (r, i) =>
            i >= askedAt &&
            r.kind === 'text' &&
            r.message.type === 'speech-update' &&
            r.message.role === 'user' &&
            r.message.status === 'stopped',
        ),
      ).toBe(true);
      // A second of the answer, paced as it plays: 50 frames of 20 ms cannot arrive in a burst.
      const answerStart = indexOf(askedAt, assistantSpeech('started'));
      const answerAudio = () =>
        received.slice(answerStart).filter((r) => r.kind === 'audio') as { atMs: number }[];
      await waitFor(() => answerAudio().length >= 50, 30_000, 'a second of the answer');
      const first50 = answerAudio().slice(0, 50);
      expect(first50.at(-1)!.atMs - first50[0]!.atMs).toBeGreaterThan(500);

      // Barge in mid-answer: a clear comes, the audio stops, the interruption is answered.
      deepgram.finalizeReply = [
        dgResults('Actually, make it four.', { isFinal: true, speechFinal: true, duration: 2 }),
      ];
      const bargedAt = received.length;
      const spoken = mic.say(actuallyFour);
      await waitFor(
        () => indexOf(bargedAt, (r) => r.kind === 'text' && r.message.type === 'clear') >= 0,
        30_000,
        'the clear message',
      );
      const clearAt = indexOf(bargedAt, (r) => r.kind === 'text' && r.message.type === 'clear');
      await spoken;
      await waitFor(
        () => indexOf(clearAt, assistantSpeech('started')) >= 0,
        30_000,
        'the answer to the interruption',
      );
      const stoppedAt = indexOf(bargedAt, assistantSpeech('stopped'));
      const nextAnswer = indexOf(clearAt, assistantSpeech('started'));
      expect(stoppedAt).toBeGreaterThanOrEqual(0);
      expect(stoppedAt).toBeLessThan(nextAnswer);
      expect(texts('user-interrupted').length).toBeGreaterThanOrEqual(1);
      // After the clear, at most a frame or two already in flight, then nothing until the new answer.
      const framesAfterClear = received
        .slice(clearAt, nextAnswer)
        .filter((r) => r.kind === 'audio').length;
      expect(framesAfterClear).toBeLessThanOrEqual(2);
      // The cut answer was far from done: most of its ~5 s had not been played.
      const answerFrames = received
        .slice(answerStart, clearAt)
        .filter((r) => r.kind === 'audio').length;
      expect(answerFrames).toBeLessThan(200);
      await waitFor(
        () =>
          received
            .slice(nextAnswer)
            .some(
              (r) =>
                r.kind === 'text' &&
                r.message.type === 'transcript' &&
                r.message.role === 'assistant' &&
                r.message.transcriptType === 'final',
            ),
        30_000,
        'the short answer to finish',
      );

      // The analysis after the call asks the same model: a summary and a pass/fail evaluation.
      model.fallback = (request) =>
        JSON.stringify(request.body?.messages).includes('You judge calls')
          ? { chunks: ['true'], usage: { prompt_tokens: 90, completion_tokens: 1 } }
          : {
              chunks: ['A table for four was booked.'],
              usage: { prompt_tokens: 80, completion_tokens: 7 },
            };
      const modelRequestsBeforeEnd = model.requests.length;

      // The caller hangs up.
      mic.stop();
      ws.close();
      let ended: any;
      await waitFor(
        () => {
          void api('GET', `/call/${call.id}`).then((r) => (ended = r.json()));
          return ended?.status === 'ended' && ended.artifact !== undefined;
        },
        30_000,
        'the ended call with its artifact',
      );
      expect(ended).toMatchObject({ status: 'ended', endedReason: 'customer-ended-call' });
      const { artifact } = ended;
      expect(
        artifact.messages
          .map((m: any) => [m.role, m.message])
          .filter(([r]: string[]) => r !== 'system'),
      ).toEqual([
        ['bot', 'Hello, this is the restaurant.'],
        ['user', 'I would like to book a table for two tonight.'],
        ['bot', expect.stringMatching(/^Sentence 1 of a long answer/)],
        ['user', 'Actually, make it four.'],
        ['bot', 'Four people, noted.'],
      ]);
      // The cut answer keeps only what was said before the barge-in.
      const cut = artifact.messages.find((m: any) => m.message.startsWith('Sentence 1'));
      expect(cut.message.length).toBeLessThan(LONG_ANSWER.join('').length);
      expect(artifact.transcript).toContain('User: I would like to book a table for two tonight.');
      expect(artifact.transcript).toContain('AI: Four people, noted.');
      expect(artifact.messagesOpenAIFormatted).toContainEqual({
        role: 'user',
        content: 'Actually, make it four.',
      });
      expect(artifact.performanceMetrics.turnLatencies.length).toBeGreaterThanOrEqual(2);
      expect(artifact.performanceMetrics.turnLatencyAverage).toBeGreaterThan(0);

      // The analysis ran on the assistant's model with the call's transcript.
      expect(ended.analysis).toEqual({
        summary: 'A table for four was booked.',
        successEvaluation: 'true',
      });
      const analysisRequests = model.requests.slice(modelRequestsBeforeEnd);
      expect(analysisRequests).toHaveLength(2);
      expect(JSON.stringify(analysisRequests[0]!.body)).toContain('Actually, make it four.');

      // The recording, downloaded through the files API, covers the call from the moment it was
      // in progress to its end (not the ringing before, while the worker started).
      const monoPath = new URL(artifact.recordingUrl).pathname;
      const wav = await api('GET', monoPath);
      expect(wav.statusCode).toBe(200);
      const recording = readWav(wav.rawPayload);
      expect(recording.sampleRateHz).toBe(RATE_HZ);
      const recordedMs = (recording.samples.length / RATE_HZ) * 1000;
      const endedAtMs = Date.parse(ended.endedAt);
      expect(recordedMs).toBeGreaterThan(endedAtMs - Date.parse(ended.startedAt) - 1000);
      expect(recordedMs).toBeLessThan(endedAtMs - Date.parse(ended.startedAt) + 1000);
      expect(Date.parse(ended.startedAt)).toBeGreaterThanOrEqual(socketOpenedAtMs - 1000);
      // Both voices are in it: the caller's speech and the assistant's answers.
      expect(recording.samples.some((sample) => Math.abs(sample) > 1000)).toBe(true);

      // Costs per component, with the model's tokens and the voice's characters.
      const costs = new Map(
        ended.costs.filter((c: any) => c.type !== 'analysis').map((c: any) => [c.type, c]),
      );
      expect(ended.costs.filter((c: any) => c.type === 'analysis')).toHaveLength(2);
      expect(costs.get('model')).toMatchObject({ promptTokens: 100, completionTokens: 305 });
      expect((costs.get('voice') as any).characters).toBeGreaterThan(0);
      expect(costs.get('transcriber')).toBeDefined();
      expect(ended.cost).toBeGreaterThan(0);

      // Webhooks: every message after its retries, in the call's order.
      await waitFor(
        () => receiver.messages('end-of-call-report').length > 0,
        30_000,
        'the end-of-call report',
      );
      expect(receiver.requests.slice(0, 3).map((r) => r.body.message.status)).toEqual([
        'ringing',
        'ringing',
        'ringing',
      ]);
      const delivered = receiver.requests
        .slice(2)
        .map((r) =>
          r.type === 'status-update' ? `status-update:${r.body.message.status}` : r.type,
        );
      expect(delivered).toEqual([
        'status-update:ringing',
        'status-update:in-progress',
        'user-interrupted',
        'status-update:ended',
        'end-of-call-report',
      ]);
      const report = receiver.messages('end-of-call-report')[0]!.body.message;
      expect(report).toMatchObject({
        endedReason: 'customer-ended-call',
        cost: ended.cost,
        analysis: ended.analysis,
      });
      expect(report.artifact.transcript).toBe(artifact.transcript);
    },
  );
});
