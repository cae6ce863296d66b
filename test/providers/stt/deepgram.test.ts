import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ProviderError } from '../../../src/providers/provider-error.js';
import { DeepgramTranscriber, listenUrl } from '../../../src/providers/stt/deepgram.js';
import { createTranscriberRegistry } from '../../../src/providers/stt/registry.js';
import { dgResults, FakeDeepgramServer, sleep, until } from '../../support/fake-deepgram-server.js';
import { collector, failure, tone } from './stt-test-helpers.js';

const fake = new FakeDeepgramServer();
const signal = new AbortController().signal;
let deepgram: DeepgramTranscriber;

beforeAll(async () => {
  await fake.start();
  deepgram = new DeepgramTranscriber({ baseUrl: fake.url, keepAliveIntervalMs: 20 });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const config = { provider: 'deepgram', model: 'nova-2', language: 'en', keywords: ['Parla:2'] };

describe('DeepgramTranscriber', () => {
  it('sends the live query and key, and reports interim, final and speech_final in order', async () => {
    fake.jitterMs = 3;
    fake.script = [
      { type: 'SpeechStarted', channel: [0], timestamp: 0.12 },
      dgResults('hel', { start: 0.1, duration: 0.3 }),
      dgResults('hello there', { isFinal: true, start: 0.1, duration: 0.9 }),
      dgResults('general', { isFinal: true, speechFinal: true, start: 1, duration: 0.5 }),
      dgResults('', { isFinal: true, start: 1.5, duration: 0.2 }),
      { type: 'UtteranceEnd', channel: [0, 1], last_word_end: 1.48 },
    ];
    const { events, options } = collector(config, { apiKey: 'dg-test-key' });
    const stream = await deepgram.open(options, signal);
    stream.pushAudio(tone(320, 1));
    await until(() => events.some((e) => e.type === 'utterance-end'));
    expect(events).toEqual([
      { type: 'speech-started', atMs: 120 },
      {
        type: 'transcript',
        text: 'hel',
        isFinal: false,
        speechFinal: false,
        confidence: 0.98,
        startMs: 100,
        endMs: 400,
      },
      {
        type: 'transcript',
        text: 'hello there',
        isFinal: true,
        speechFinal: false,
        confidence: 0.98,
        startMs: 100,
        endMs: 1000,
      },
      {
        type: 'transcript',
        text: 'general',
        isFinal: true,
        speechFinal: true,
        confidence: 0.98,
        startMs: 1000,
        endMs: 1500,
      },
      { type: 'utterance-end', atMs: 1480 },
    ]);
    const connection = fake.connections[0]!;
    expect(connection.path).toBe('/v1/listen');
    expect(connection.headers.authorization).toBe('Token dg-test-key');
    expect(Object.fromEntries(connection.query)).toMatchObject({
      model: 'nova-2',
      language: 'en',
      encoding: 'linear16',
      sample_rate: '16000',
      channels: '1',
      interim_results: 'true',
      vad_events: 'true',
      smart_format: 'true',
      keywords: 'Parla:2',
    });
    expect(Number(connection.query.get('endpointing'))).toBeGreaterThan(0);
    expect(Number(connection.query.get('utterance_end_ms'))).toBeGreaterThanOrEqual(1000);
    await stream.close();
  });

  it('delivers the audio bytes intact, though the caller reuses its array', async () => {
    const { events, options } = collector(config, { apiKey: 'dg-test-key' });
    const stream = await deepgram.open(options, signal);
    const frame = new Int16Array(160);
    const expected: number[] = [];
    for (let i = 0; i < 50; i++) {
      for (let j = 0; j < frame.length; j++) {
        frame[j] = ((i * 997 + j * 31) % 65536) - 32768;
        expected.push(frame[j]!);
      }
      stream.pushAudio(frame);
    }
    await stream.close();
    const connection = fake.connections[0]!;
    const received = Buffer.concat(connection.audio);
    const samples = new Int16Array(received.buffer, received.byteOffset, received.length / 2);
    expect(Array.from(samples)).toEqual(expected);
    // A clean close: CloseStream last, Deepgram's close awaited, no error.
    expect(connection.controls.at(-1)).toBe('CloseStream');
    expect(await connection.closed).toBe(1000);
    expect(events.map((e) => e.type)).toEqual(['closed']);
  });

  it('sends KeepAlive while no audio flows, and none while it does', async () => {
    const { options } = collector(config, { apiKey: 'dg-test-key' });
    const stream = await deepgram.open(options, signal);
    await until(() => fake.connections[0]!.controls.filter((c) => c === 'KeepAlive').length >= 2);
    await stream.close();

    const busy = new DeepgramTranscriber({ baseUrl: fake.url, keepAliveIntervalMs: 1_000 });
    const second = await busy.open(collector(config, { apiKey: 'dg-test-key' }).options, signal);
    for (let i = 0; i < 50; i++) {
      second.pushAudio(tone(160, i));
      await sleep(2);
    }
    await second.close();
    expect(fake.connections[1]!.controls).toEqual(['CloseStream']);
  });

  it('asks Deepgram to finalize and reports what it flushes', async () => {
    fake.finalizeReply = [dgResults('flushed', { isFinal: true, start: 0, duration: 0.4 })];
    const { events, options } = collector(config, { apiKey: 'dg-test-key' });
    const stream = await deepgram.open(options, signal);
    stream.pushAudio(tone(320, 5));
    stream.finalize();
    await until(() => events.some((e) => e.type === 'transcript' && e.text === 'flushed'));
    expect(fake.connections[0]!.controls).toContain('Finalize');
    await stream.close();
  });

  it('gives up waiting for Deepgram to close after the close timeout', async () => {
    fake.ignoreCloseStream = true;
    const patient = new DeepgramTranscriber({ baseUrl: fake.url, closeTimeoutMs: 30 });
    const { events, options } = collector(config, { apiKey: 'dg-test-key' });
    const stream = await patient.open(options, signal);
    stream.pushAudio(tone(160, 1));
    await stream.close();
    expect(events).toEqual([{ type: 'closed' }]);
    expect(fake.connections[0]!.controls).toEqual(['CloseStream']);
    await fake.connections[0]!.closed;
  });

  it('maps a 401 refusal to a non-retryable ProviderError', async () => {
    const error = await failure(
      deepgram.open(collector(config, { apiKey: 'wrong' }).options, signal),
    );
    expect(error.vendorStatus).toBe(401);
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('refused with 401');
  });

  it('maps a 429 refusal to a retryable ProviderError', async () => {
    fake.refuseStatus = 429;
    const error = await failure(
      deepgram.open(collector(config, { apiKey: 'dg-test-key' }).options, signal),
    );
    expect(error.vendorStatus).toBe(429);
    expect(error.retryable).toBe(true);
  });

  it('refuses to connect to the hosted API without a key', async () => {
    const hosted = new DeepgramTranscriber();
    const error = await failure(hosted.open(collector(config).options, signal));
    expect(error.retryable).toBe(false);
  });

  it('reports an error event when Deepgram drops the connection mid-stream', async () => {
    fake.dropAfterBytes = 640;
    const { events, options } = collector(config, { apiKey: 'dg-test-key' });
    const stream = await deepgram.open(options, signal);
    stream.pushAudio(tone(640, 3));
    await until(() => events.some((e) => e.type === 'closed'));
    expect(events.map((e) => e.type)).toEqual(['error', 'closed']);
    const error = (events[0] as { error: ProviderError }).error;
    expect(error).toBeInstanceOf(ProviderError);
    expect(error.retryable).toBe(true);
    await stream.close();
  });

  it('queues audio while connecting, bounded by dropping the oldest', async () => {
    fake.upgradeDelayMs = 20;
    // 0.01 s at 16 kHz: room for 160 samples (two chunks of 80).
    const small = new DeepgramTranscriber({ baseUrl: fake.url, maxQueuedSeconds: 0.01 });
    const stream = small.start(collector(config, { apiKey: 'dg-test-key' }).options, signal);
    for (let i = 0; i < 10; i++) {
      stream.pushAudio(tone(80, i));
    }
    expect(stream.droppedBytes).toBe(8 * 160);
    await stream.ready;
    await stream.close();
    const received = Buffer.concat(fake.connections[0]!.audio);
    expect(Array.from(new Int16Array(received.buffer, received.byteOffset, 160))).toEqual([
      ...tone(80, 8),
      ...tone(80, 9),
    ]);
  });

  it('closes cleanly when closed while still connecting, sending the queued audio', async () => {
    fake.upgradeDelayMs = 10;
    const { events, options } = collector(config, { apiKey: 'dg-test-key' });
    const stream = deepgram.start(options, signal);
    stream.pushAudio(tone(160, 4));
    await stream.close();
    expect(fake.connections[0]!.audioBytes).toBe(320);
    expect(fake.connections[0]!.controls).toEqual(['CloseStream']);
    expect(events).toEqual([{ type: 'closed' }]);
  });

  it('gives up connecting when the signal aborts', async () => {
    fake.upgradeDelayMs = 1_000;
    const controller = new AbortController();
    const opening = deepgram.open(
      collector(config, { apiKey: 'dg-test-key' }).options,
      controller.signal,
    );
    controller.abort(new Error('call ended'));
    await expect(opening).rejects.toThrow('call ended');
  });

  it('is served by the registry with the configured key and self-hosted URL', async () => {
    const registry = createTranscriberRegistry({
      deepgramApiKey: 'dg-test-key',
      deepgramBaseUrl: fake.url,
    });
    const transcriber = registry.get('deepgram')!;
    expect(transcriber.capabilities).toEqual({ interimResults: true, endOfTurn: true });
    const stream = await transcriber.open(collector(config).options, signal);
    await stream.close();
    expect(fake.connections[0]!.headers.authorization).toBe('Token dg-test-key');
    expect(registry.get('nobody')).toBeUndefined();
  });
});

describe('listenUrl', () => {
  it('accepts http(s) and /v1 base URLs, and sends nova-3 keywords as key terms', () => {
    const url = new URL(
      listenUrl(
        'https://dg.example/v1/',
        { model: 'nova-3', keywords: ['Parla:3'], keyterm: ['Vapi'], smartFormat: false },
        8000,
      ),
    );
    expect(url.protocol).toBe('wss:');
    expect(url.pathname).toBe('/v1/listen');
    expect(url.searchParams.getAll('keyterm')).toEqual(['Vapi', 'Parla']);
    expect(url.searchParams.has('keywords')).toBe(false);
    expect(url.searchParams.get('smart_format')).toBe('false');
    expect(url.searchParams.get('sample_rate')).toBe('8000');
  });
});
