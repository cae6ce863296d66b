import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ParlaError } from '../../../src/core/errors.js';
import { CustomTranscriber } from '../../../src/providers/stt/custom-transcriber.js';
import { FakeCustomTranscriberServer } from '../../support/fake-custom-transcriber-server.js';
import { until } from '../../support/fake-deepgram-server.js';
import { collector, failure, tone } from './stt-test-helpers.js';

const fake = new FakeCustomTranscriberServer();
const signal = new AbortController().signal;
const custom = new CustomTranscriber();

beforeAll(() => fake.start());
afterAll(() => fake.close());
beforeEach(() => fake.reset());

describe('CustomTranscriber', () => {
  it('sends the start frame then PCM, and reports customer transcriptions as finals', async () => {
    fake.transcripts = ['hello there', 'how are you'];
    fake.bytesPerReply = 3200;
    const { events, options } = collector({
      provider: 'custom-transcriber',
      server: { url: fake.url, headers: { 'x-tenant': 'acme' }, secret: 's3cret' },
    });
    const stream = await custom.open(options, signal);
    for (let i = 0; i < 20; i++) {
      stream.pushAudio(tone(160, i));
    }
    await until(() => events.filter((e) => e.type === 'transcript').length === 2);
    await stream.close();
    const connection = fake.connections[0]!;
    expect(connection.start).toEqual({
      type: 'start',
      encoding: 'linear16',
      container: 'raw',
      sampleRate: 16000,
      channels: 1,
    });
    expect(connection.audioBeforeStart).toBe(false);
    expect(connection.audioBytes).toBe(20 * 320);
    expect(connection.headers['x-tenant']).toBe('acme');
    expect(connection.headers['x-vapi-secret']).toBe('s3cret');
    expect(await connection.closed).toBe(1000);
    const transcripts = events.filter((e) => e.type === 'transcript');
    expect(transcripts.map((e) => [e.text, e.isFinal, e.speechFinal])).toEqual([
      ['hello there', true, false],
      ['how are you', true, false],
    ]);
    expect(events.at(-1)).toEqual({ type: 'closed' });
    expect(events.some((e) => e.type === 'error')).toBe(false);
  });

  it('needs transcriber.server.url', async () => {
    const error = await custom
      .open(collector({ provider: 'custom-transcriber' }).options, signal)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ParlaError);
  });

  it('maps a refused upgrade to a ProviderError', async () => {
    fake.refuseStatus = 503;
    const error = await failure(
      custom.open(
        collector({ provider: 'custom-transcriber', server: { url: fake.url } }).options,
        signal,
      ),
    );
    expect(error.vendorStatus).toBe(503);
    expect(error.retryable).toBe(true);
  });
});
