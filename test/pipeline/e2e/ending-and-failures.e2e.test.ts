import { describe, expect, it } from 'vitest';
import { fakePcm } from '../../support/fake-voice-servers.js';
import { useFakeVendors, wav } from './support/fake-vendors.js';
import { RATE_HZ, type RealtimeDriver } from './support/realtime-driver.js';

/*
 * How calls end and how provider failures play out, end to end in real time through the real
 * adapters and the local fake vendors, with espeak-ng speech as the caller.
 */

const vendors = useFakeVendors();

const BOOKING = "Hi, I'd like to book a table for two tonight, around eight.";
const REPLY = 'Of course. For two at eight tonight. May I have your name?';

/** Samples the fake voice vendors send for `text` at the call's rate. */
function voiceSamples(text: string): number {
  return fakePcm(text, RATE_HZ).length / 2;
}

async function ended(driver: RealtimeDriver): Promise<{ atMs: number; endedReason: string }> {
  return driver.next('call-ended', () => true, 15_000);
}

/** Output after the call ended: tick() is no longer called, so no frame carries audio. */
function expectNothingAfter(driver: RealtimeDriver, atMs: number): void {
  expect(driver.framesBetween(atMs + 1).filter((frame) => frame.audible)).toEqual([]);
}

describe('pipeline end to end: ending the call', () => {
  it('maxDurationSeconds ends the call mid-sentence with exceeded-max-duration', async () => {
    // The control API's minimum is 10 s; the pipeline takes any duration, and 3 s keeps it short.
    const driver = vendors.driver({ maxDurationSeconds: 3 });
    driver.start();
    await driver.waitFor('Deepgram connection', () => vendors.deepgram.connections.length === 1);
    void driver.play(wav('m1-order-status'), [
      { atMs: 1500, run: () => vendors.transcript("Hello, I'm calling about my order.") },
    ]);
    const end = await ended(driver);

    expect(end.endedReason).toBe('exceeded-max-duration');
    expect(end.atMs).toBeGreaterThanOrEqual(3000);
    expect(end.atMs).toBeLessThan(3000 + 500);
    // The caller was still talking (the fixture is 4.7 s): the turn was never answered.
    expect(driver.speech('user', 'started')).toHaveLength(1);
    expect(driver.speech('user', 'stopped')).toEqual([]);
    expect(vendors.openai.requests).toEqual([]);
    expectNothingAfter(driver, end.atMs);
    // The transcriber connection was closed.
    await vendors.deepgram.connections[0]!.closed;
    expect(driver.eventsOf('call-ended')).toHaveLength(1);
  });

  it('silenceTimeoutSeconds: after the silence message is said, ends with silence-timed-out', async () => {
    const goodbye = 'Are you still there? I will hang up now. Goodbye.';
    const driver = vendors.driver({
      firstMessage: 'Hello, how can I help?',
      firstMessageMode: 'assistant-speaks-first',
      silenceTimeoutSeconds: 2,
      messagePlan: { silenceTimeoutMessage: goodbye },
    });
    driver.start();
    const end = await ended(driver);

    expect(end.endedReason).toBe('silence-timed-out');
    const inputs = driver.eventsOf('voice-input').map((e) => e.input.trim());
    expect(inputs.join(' ')).toBe(`Hello, how can I help? ${goodbye}`);
    // Two assistant messages: the greeting, then 2 s of silence, then the silence message.
    const starts = driver.speech('assistant', 'started');
    const stops = driver.speech('assistant', 'stopped');
    expect(starts).toHaveLength(2);
    expect(starts[1]! - stops[0]!).toBeGreaterThanOrEqual(2000 - 20);
    expect(starts[1]! - stops[0]!).toBeLessThan(2000 + 600);
    // The silence message played to its end before the call ended.
    expect(driver.playedSamples).toBe(inputs.reduce((n, text) => n + voiceSamples(text), 0));
    expect(end.atMs).toBeGreaterThanOrEqual(stops[1]!);
    expectNothingAfter(driver, end.atMs);
    expect(vendors.openai.requests).toEqual([]);
  });
});

describe('pipeline end to end: provider failure and fallback', () => {
  /** Plays the booking turn; Deepgram's final answers the Finalize after the caller stops. */
  async function bookTable(driver: RealtimeDriver): Promise<void> {
    driver.start();
    await driver.waitFor('Deepgram connection', () => vendors.deepgram.connections.length === 1);
    vendors.finalOnFinalize(BOOKING);
    await driver.play(wav('f1-book-table'), [
      { atMs: 1200, run: () => vendors.transcript("Hi, I'd like to") },
    ]);
  }

  it('a model 500 ends the call with the provider-fault endedReason', async () => {
    vendors.openai.fallback = () => ({ status: 500, errorMessage: 'the fake is down' });
    const driver = vendors.driver();
    await bookTable(driver);
    const end = await ended(driver);

    expect(end.endedReason).toBe('call.in-progress.error-providerfault-openai-500-server-error');
    expect(vendors.openai.requests.length).toBeGreaterThanOrEqual(1);
    expect(vendors.openai.sentBody(0).messages!.at(-1)).toEqual({
      role: 'user',
      content: BOOKING,
    });
    expect(end.atMs).toBeGreaterThanOrEqual(driver.speech('user', 'stopped')[0]!);
    expect(driver.eventsOf('voice-input')).toEqual([]);
    expect(driver.frames.filter((frame) => frame.audible)).toEqual([]);
  });

  it('a transcriber that refuses hands over to the fallbackPlan transcriber', async () => {
    const speech = wav('f1-book-table');
    vendors.custom.transcripts = [BOOKING];
    // The fallback's transcript comes when 2/3 of the speech has reached it.
    vendors.custom.bytesPerReply = Math.round((speech.length * 2 * 2) / 3);
    const driver = vendors.driver({
      transcriber: {
        provider: 'deepgram',
        model: 'nova-2',
        fallbackPlan: {
          transcribers: [{ provider: 'custom-transcriber', server: { url: vendors.custom.url } }],
        },
      },
      // Deepgram refuses this key (401 on the websocket upgrade).
      transcriberApiKey: 'not-the-deepgram-key',
    });
    vendors.openai.enqueue({ chunks: [REPLY] });
    void driver.play(speech);
    driver.start();
    await driver.next('speech-update', (e) => e.role === 'assistant' && e.status === 'stopped');

    expect(vendors.deepgram.connections).toEqual([]);
    const [connection] = vendors.custom.connections;
    expect(connection!.start).toMatchObject({ type: 'start', sampleRate: RATE_HZ });
    // Audio heard while Deepgram was refusing was replayed to the fallback.
    expect(connection!.audioBytes).toBeGreaterThanOrEqual(speech.length * 2);
    expect(driver.eventsOf('transcript').filter((e) => e.role === 'user')).toMatchObject([
      { transcriptType: 'final', transcript: BOOKING },
    ]);
    expect(vendors.openai.sentBody(0).messages!.at(-1)).toEqual({
      role: 'user',
      content: BOOKING,
    });
    const inputs = driver.eventsOf('voice-input').map((e) => e.input);
    expect(inputs.join(' ').replace(/\s+/g, ' ').trim()).toBe(REPLY);
    expect(driver.playedSamples).toBe(inputs.reduce((n, text) => n + voiceSamples(text), 0));
    expect(driver.pipeline.ended).toBe(false);
  });

  it('a voice that fails hands over to the fallbackPlan voice, whose audio is played', async () => {
    const driver = vendors.driver({
      voice: {
        provider: 'cartesia',
        voiceId: 'sonic-voice',
        fallbackPlan: { voices: [{ provider: '11labs', voiceId: 'rachel' }] },
      },
      // Cartesia refuses this key (401 on the websocket upgrade).
      voiceApiKey: 'not-the-cartesia-key',
      recordAudio: true,
    });
    vendors.openai.enqueue({ chunks: [REPLY] });
    await bookTable(driver);
    await driver.next('speech-update', (e) => e.role === 'assistant' && e.status === 'stopped');

    expect(vendors.cartesia.requests).toEqual([]);
    const inputs = driver.eventsOf('voice-input').map((e) => e.input);
    // Cartesia was tried for every chunk and refused each time.
    expect(vendors.voiceFallbacks).toEqual(inputs.map(() => 'cartesia'));
    expect(vendors.elevenLabs.requests.map((r) => r.body.text)).toEqual(inputs);
    expect(vendors.elevenLabs.requests.every((r) => r.headers['xi-api-key'] === 'test-key')).toBe(
      true,
    );
    // What went out is ElevenLabs' audio for each chunk, in order.
    const played = driver.audio();
    const first = played.findIndex((s) => s !== 0);
    let at = first;
    for (const text of inputs) {
      const pcm = fakePcm(text, RATE_HZ);
      const expected = new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length / 2);
      expect(played.subarray(at, at + expected.length)).toEqual(expected);
      at += expected.length;
    }
    expect(driver.pipeline.messages.at(-1)).toEqual({ role: 'assistant', content: REPLY });
    expect(driver.pipeline.ended).toBe(false);
  });
});
