import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTranscriberRegistry } from '../../../src/providers/stt/registry.js';
import { FakeCustomTranscriberServer } from '../../support/fake-custom-transcriber-server.js';
import { dgResults, FakeDeepgramServer, until } from '../../support/fake-deepgram-server.js';
import { collector, failure, tone } from './stt-test-helpers.js';

const deepgram = new FakeDeepgramServer();
const custom = new FakeCustomTranscriberServer();
const signal = new AbortController().signal;

beforeAll(async () => {
  await Promise.all([deepgram.start(), custom.start()]);
});
afterAll(async () => {
  await Promise.all([deepgram.close(), custom.close()]);
});
beforeEach(() => {
  deepgram.reset();
  custom.reset();
});

function registry() {
  return createTranscriberRegistry({
    deepgramApiKey: 'dg-test-key',
    deepgramBaseUrl: deepgram.url,
  });
}

function withFallback(): Record<string, unknown> {
  return {
    provider: 'deepgram',
    model: 'nova-2',
    fallbackPlan: {
      transcribers: [
        { provider: 'unknown-vendor' },
        { provider: 'custom-transcriber', server: { url: custom.url } },
      ],
    },
  };
}

describe('fallback transcribers', () => {
  it('uses the plain adapter when there is no fallback plan', () => {
    const transcribers = registry();
    const transcriber = transcribers.forConfig({ provider: 'deepgram' });
    expect(transcriber).toBe(transcribers.get('deepgram'));
    expect(transcriber?.capabilities).toEqual({ interimResults: true, endOfTurn: true });
    expect(registry().forConfig({ provider: 'nobody' })).toBeUndefined();
  });

  it('opens the next transcriber when the first refuses', async () => {
    deepgram.refuseStatus = 401;
    custom.transcripts = ['from the fallback'];
    const transcriber = registry().forConfig(withFallback())!;
    expect(transcriber.capabilities).toEqual({ interimResults: false, endOfTurn: false });
    const { events, options } = collector(withFallback());
    const stream = await transcriber.open(options, signal);
    stream.pushAudio(tone(320, 7));
    await until(() => events.some((e) => e.type === 'transcript'));
    await stream.close();
    expect(events.map((e) => e.type)).toEqual(['transcript', 'closed']);
    expect(custom.connections).toHaveLength(1);
  });

  it('switches when the first errors before producing anything, replaying the audio', async () => {
    deepgram.dropAfterBytes = 640;
    custom.transcripts = ['recovered'];
    custom.bytesPerReply = 1280;
    const { events, options } = collector(withFallback());
    const stream = await registry().forConfig(withFallback())!.open(options, signal);
    stream.pushAudio(tone(320, 1));
    await until(() => custom.connections.length === 1);
    stream.pushAudio(tone(320, 2));
    await until(() => events.some((e) => e.type === 'transcript'));
    await stream.close();
    expect(events.map((e) => e.type)).toEqual(['transcript', 'closed']);
    // Both chunks reached the fallback: the first by replay.
    expect(custom.connections[0]!.audioBytes).toBe(1280);
  });

  it('keeps the first once it has produced something, passing its errors on', async () => {
    deepgram.script = [dgResults('hi', { isFinal: true })];
    const { events, options } = collector(withFallback());
    const stream = await registry().forConfig(withFallback())!.open(options, signal);
    stream.pushAudio(tone(320, 1));
    await until(() => events.some((e) => e.type === 'transcript'));
    deepgram.connections[0]!.socket.terminate();
    await until(() => events.some((e) => e.type === 'closed'));
    expect(events.map((e) => e.type)).toEqual(['transcript', 'error', 'closed']);
    expect(custom.connections).toHaveLength(0);
    await stream.close();
  });

  it('rejects with the last failure when every transcriber refuses', async () => {
    deepgram.refuseStatus = 429;
    custom.refuseStatus = 403;
    const { options } = collector(withFallback());
    const error = await failure(registry().forConfig(withFallback())!.open(options, signal));
    expect(error.vendorStatus).toBe(403);
  });
});
