import { describe, expect, it } from 'vitest';
import { fakePcm } from '../../support/fake-voice-servers.js';
import { useFakeVendors, wav } from './support/fake-vendors.js';
import { RATE_HZ, type RealtimeDriver } from './support/realtime-driver.js';

/*
 * Whole turns in real time through the real adapters (Deepgram, OpenAI chat, ElevenLabs) and the
 * local fake vendors, with espeak-ng speech as the caller and the default energy VAD.
 */

const vendors = useFakeVendors();

const BOOKING = "Hi, I'd like to book a table for two tonight, around eight.";
/**
 * Twelve sentences (twelve voice requests): the fake voice sends 40 samples a character, so
 * about 2.7 s of audio at 16 kHz.
 */
const LONG_REPLY = [
  'Of course, I can book a table for two people tonight at eight in our main dining room.',
  'We also have a quieter table by the window if you prefer somewhere calmer for the evening.',
  'Please note that the kitchen closes at ten, so the last orders are taken at half past nine.',
  'On Fridays there is live music from seven, which some of our guests love and others avoid.',
  'If you have any allergies or dietary needs, let us know and the chef will gladly adapt.',
  'Parking is free in the courtyard behind the building, and the entrance is on the left side.',
  'We hold a booking for fifteen minutes, so do call us if you think you might be running late.',
  'Children are very welcome, and we can bring a high chair to the table if you need one.',
  'For groups of eight or more we ask for a deposit, but that does not apply to your booking.',
  'You will get a text message with the details of the booking a few minutes after this call.',
  'Could you tell me the name for the booking and a phone number where we can reach you?',
].join(' ');

/** Samples the fake voice vendor sends for `text` at the call's rate. */
function voiceSamples(text: string): number {
  return fakePcm(text, RATE_HZ).length / 2;
}

/** The caller books a table; resolves once the assistant's reply is audible. */
async function bookTable(driver: RealtimeDriver, reply: string): Promise<number> {
  vendors.openai.enqueue({ chunks: reply.split(/(?<=\. )/) });
  driver.start();
  await driver.waitFor('Deepgram connection', () => vendors.deepgram.connections.length === 1);
  vendors.finalOnFinalize(BOOKING);
  await driver.play(wav('f1-book-table'), [
    { atMs: 1200, run: () => vendors.transcript("Hi, I'd like to") },
    { atMs: 2500, run: () => vendors.transcript("Hi, I'd like to book a table for two") },
  ]);
  return (await driver.next('speech-update', (e) => e.role === 'assistant')).atMs;
}

describe('pipeline end to end: a conversation through the vendor adapters', () => {
  it('answers a full turn: speech in, transcript, model, voice, the vendor audio out', async () => {
    const reply = 'Of course. For two at eight tonight. May I have your name?';
    const driver = vendors.driver({ recordAudio: true });
    const startedAt = await bookTable(driver, reply);
    await driver.next('speech-update', (e) => e.role === 'assistant' && e.status === 'stopped');

    // The caller's speech was heard by VAD and streamed to the vendor at 16 kHz.
    const connection = vendors.deepgram.connections[0]!;
    expect(connection.query.get('sample_rate')).toBe(String(RATE_HZ));
    expect(connection.query.get('encoding')).toBe('linear16');
    expect(connection.audioBytes).toBeGreaterThanOrEqual(wav('f1-book-table').length * 2 - 640);
    expect(connection.controls).toContain('Finalize');
    const [userStarted] = driver.speech('user', 'started');
    const [userStopped] = driver.speech('user', 'stopped');
    expect(userStarted).toBeLessThan(userStopped!);
    const finals = driver
      .eventsOf('transcript')
      .filter((e) => e.transcriptType === 'final' && e.role === 'user');
    expect(finals.map((e) => e.transcript)).toEqual([BOOKING]);
    expect(startedAt).toBeGreaterThan(userStopped!);

    // The model got the turn with the system prompt, and its text went to the voice per sentence.
    const request = vendors.openai.sentBody(0);
    expect(request.model).toBe('gpt-4o-mini');
    expect(request.messages?.at(0)).toMatchObject({ role: 'system' });
    expect(request.messages?.at(-1)).toEqual({ role: 'user', content: BOOKING });
    const inputs = driver.eventsOf('voice-input').map((e) => e.input);
    expect(inputs.join(' ').replace(/\s+/g, ' ').trim()).toBe(reply);
    expect(vendors.elevenLabs.requests.map((r) => r.body.text)).toEqual(inputs);
    expect(vendors.elevenLabs.requests[0]!.query.get('output_format')).toBe('pcm_16000');

    // Out came exactly the vendor's audio, frame after frame, and then silence.
    const expected = new Int16Array(inputs.reduce((n, text) => n + voiceSamples(text), 0));
    let at = 0;
    for (const text of inputs) {
      const pcm = fakePcm(text, RATE_HZ);
      expected.set(new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length / 2), at);
      at += pcm.length / 2;
    }
    const played = driver.audio();
    const firstSample = played.findIndex((s) => s !== 0);
    expect(firstSample).toBeGreaterThanOrEqual(0);
    expect(played.subarray(firstSample, firstSample + expected.length)).toEqual(expected);
    expect(played.subarray(firstSample + expected.length).every((s) => s === 0)).toBe(true);

    expect(driver.pipeline.messages.slice(-2)).toEqual([
      { role: 'user', content: BOOKING },
      { role: 'assistant', content: reply },
    ]);
    expect(driver.eventsOf('metrics')).toHaveLength(1);
    expect(driver.pipeline.ended).toBe(false);
  });

  it('barge-in: the caller talks over the reply; output stops at once, history keeps what was heard', async () => {
    const driver = vendors.driver();
    // The voice vendor streams each sentence at about real time (8 ms of audio a chunk), so a
    // request is still streaming when the caller cuts in.
    vendors.elevenLabs.enqueue(...Array.from({ length: 12 }, () => ({ chunkDelayMs: 7 })));
    const startedAt = await bookTable(driver, LONG_REPLY);
    await driver.waitFor('600 ms of the reply', () => driver.nowMs > startedAt + 600);
    vendors.finalOnFinalize("Wait, wait, that's not right.");
    void driver.play(wav('m1-wait'), [{ atMs: 500, run: () => vendors.transcript('Wait, wait') }]);
    const interrupted = await driver.next('user-interrupted');
    const cutAt = interrupted.atMs;
    const next = await driver.next(
      'speech-update',
      (e) => e.role === 'assistant' && e.status === 'started' && e.atMs > cutAt,
    );

    // Silent from the frame after the decision until the next reply starts.
    const between = driver.framesBetween(cutAt + 1, next.atMs);
    expect(between.length).toBeGreaterThan(10);
    expect(between.filter((frame) => frame.audible)).toEqual([]);
    // The reply was cut: less audio went out than the vendor would have sent.
    const heardSamples = driver.framesBetween(0, cutAt).reduce((n, f) => n + f.samples, 0);
    const heardMs = (heardSamples / RATE_HZ) * 1000;
    const wholeMs = (voiceSamples(LONG_REPLY) / RATE_HZ) * 1000;
    expect(heardMs).toBeGreaterThan(400);
    expect(heardMs).toBeLessThan(wholeMs - 1200);

    // History: the heard prefix of the reply (cut at a word), then the caller's words.
    const prefix = vendors.openai.sentBody(1).messages!.at(-2)!;
    expect(prefix.role).toBe('assistant');
    const content = String(prefix.content);
    expect(LONG_REPLY.startsWith(content)).toBe(true);
    expect(content.length).toBeGreaterThan(10);
    expect(content.length).toBeLessThan(LONG_REPLY.length - 400);
    expect(vendors.openai.sentBody(1).messages!.at(-1)).toEqual({
      role: 'user',
      content: "Wait, wait, that's not right.",
    });
    // A voice request still streaming when the caller cut in was abandoned.
    expect(vendors.elevenLabs.requests.some((r) => r.aborted)).toBe(true);
  });

  it('an acknowledgement ("okay") over the reply does not interrupt it', async () => {
    const driver = vendors.driver({ stopSpeakingPlan: { numWords: 1 } });
    const startedAt = await bookTable(driver, LONG_REPLY);
    await driver.waitFor('500 ms of the reply', () => driver.nowMs > startedAt + 500);
    vendors.finalOnFinalize('okay');
    void driver.play(wav('speech/okay'), [{ atMs: 300, run: () => vendors.transcript('okay') }]);
    await driver.next('speech-update', (e) => e.role === 'assistant' && e.status === 'stopped');
    await driver.sleep(600);

    expect(driver.eventsOf('user-interrupted')).toEqual([]);
    const finals = driver
      .eventsOf('transcript')
      .filter((e) => e.transcriptType === 'final' && e.role === 'user');
    expect(finals.map((e) => e.transcript)).toEqual([BOOKING, 'okay']);
    // Every sample the vendor sent for the reply was played.
    const inputs = driver.eventsOf('voice-input').map((e) => e.input);
    expect(inputs.join(' ').replace(/\s+/g, ' ').trim()).toBe(LONG_REPLY);
    expect(driver.playedSamples).toBe(inputs.reduce((n, text) => n + voiceSamples(text), 0));
    expect(driver.pipeline.messages.at(-1)).toEqual({ role: 'assistant', content: LONG_REPLY });
    // The acknowledgement is not a turn: the model was asked once.
    expect(vendors.openai.requests).toHaveLength(1);
  });

  it('an interruption phrase ("stop") interrupts at once, even below numWords', async () => {
    const driver = vendors.driver({ stopSpeakingPlan: { numWords: 3 } });
    const startedAt = await bookTable(driver, LONG_REPLY);
    await driver.waitFor('500 ms of the reply', () => driver.nowMs > startedAt + 500);
    vendors.finalOnFinalize('Stop.');
    const saidAt = driver.nowMs;
    void driver.play(wav('speech/stop'), [{ atMs: 300, run: () => vendors.transcript('stop') }]);
    const interrupted = await driver.next('user-interrupted');

    // Decided on the partial "stop": after it arrived, not on VAD alone (numWords 3).
    const partial = driver
      .eventsOf('transcript')
      .find((e) => e.transcriptType === 'partial' && e.transcript === 'stop')!;
    expect(partial).toBeDefined();
    expect(interrupted.atMs).toBeGreaterThanOrEqual(partial.atMs);
    expect(interrupted.atMs - saidAt).toBeLessThan(1500);
    await driver.sleep(300);
    const after = driver.framesBetween(interrupted.atMs + 1, interrupted.atMs + 300);
    expect(after.length).toBeGreaterThan(5);
    expect(after.filter((frame) => frame.audible)).toEqual([]);
    const prefix = driver.pipeline.messages.find((m) => m.role === 'assistant')!.content!;
    expect(LONG_REPLY.startsWith(prefix)).toBe(true);
    expect(prefix.length).toBeLessThan(LONG_REPLY.length - 400);
  });
});
