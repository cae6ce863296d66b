import { describe, expect, it } from 'vitest';
import { PipelineDriver, speech } from './support/pipeline-driver.js';

const LONG_REPLY =
  'Sure, I can move that appointment for you today. We have openings on Thursday morning, ' +
  'Thursday afternoon and Friday at noon, and I can also put you on the waiting list.';

/** A caller turn, then runs until the assistant has been speaking for `speakMs`. */
async function assistantSpeaking(driver: PipelineDriver, speakMs: number): Promise<number> {
  await driver.start();
  await driver.run(200);
  driver.say(speech(1200));
  const startedAt = await driver.runUntilAssistant('started');
  await driver.run(speakMs);
  return startedAt;
}

describe('CallPipeline: barge-in', () => {
  it('stops output within the frame, keeps the spoken prefix and aborts model and voice', async () => {
    const driver = new PipelineDriver({
      script: [{ text: 'I need to move my appointment.' }, { text: 'Actually, make it Friday.' }],
      model: { replies: [LONG_REPLY, 'Friday at noon it is.'], tokenDelayMs: 80 },
    });
    const startedAt = await assistantSpeaking(driver, 600);
    driver.say(speech(1000, 2000));
    await driver.run(2000, () => driver.eventsOf('user-interrupted').length > 0);

    const [interrupted] = driver.eventsOf('user-interrupted');
    expect(interrupted).toBeDefined();
    expect(interrupted!.turnId).toBe(1);
    const cutAt = interrupted!.atMs;
    await driver.run(200); // lets the fakes wake up and see the abort
    // The frame of the decision and every one after it are silent.
    expect(driver.frames.filter((f) => f.atMs >= cutAt).every((f) => f.samples === 0)).toBe(true);
    expect(driver.model.aborted).toEqual([0]);

    // History keeps what was heard: about 40 ms of audio per character, cut at a word.
    const heardMs = driver.frames.filter((f) => f.samples > 0).length * 20;
    const assistant = driver.pipeline.messages.filter((m) => m.role === 'assistant');
    expect(assistant).toHaveLength(1);
    const prefix = assistant[0]!.content!;
    expect(LONG_REPLY.startsWith(prefix)).toBe(true);
    expect(prefix.length).toBeLessThan(LONG_REPLY.length);
    expect(prefix.length).toBeGreaterThan(heardMs / 40 - 15);
    expect(prefix.length).toBeLessThanOrEqual(heardMs / 40 + 1);
    expect(startedAt).toBeLessThan(cutAt);

    // The interrupting words become the next turn, answered after the backoff (1 s).
    const nextStart = await driver.runUntilAssistant('started', 10_000, cutAt + 1);
    expect(nextStart).toBeGreaterThanOrEqual(cutAt + 1000);
    const second = driver.model.requests[1]!;
    expect(second.messages.slice(-2)).toEqual([
      { role: 'assistant', content: prefix },
      { role: 'user', content: 'Actually, make it Friday.' },
    ]);
  });

  it('with modelOutputInMessagesEnabled keeps all the model said', async () => {
    const driver = new PipelineDriver({
      script: [{ text: 'I need to move my appointment.' }, { text: 'Actually, make it Friday.' }],
      model: { replies: [LONG_REPLY, 'Friday at noon it is.'] },
      pipeline: { modelOutputInMessagesEnabled: true },
    });
    await assistantSpeaking(driver, 600);
    driver.say(speech(1000, 2000));
    await driver.run(2000, () => driver.eventsOf('user-interrupted').length > 0);
    expect(driver.eventsOf('user-interrupted')).toHaveLength(1);
    // The model had streamed the whole reply; far less of it was heard.
    const heardChars = (driver.frames.filter((f) => f.samples > 0).length * 20) / 40;
    expect(heardChars).toBeLessThan(LONG_REPLY.length / 2);
    expect(driver.pipeline.messages.filter((m) => m.role === 'assistant')).toEqual([
      { role: 'assistant', content: LONG_REPLY },
    ]);
  });

  it('aborts a voice still synthesising', async () => {
    const driver = new PipelineDriver({
      script: [{ text: 'I need to move my appointment.' }, { text: 'Actually, make it Friday.' }],
      model: { replies: [LONG_REPLY, 'Friday at noon it is.'] },
      // Real-time voice: a streaming segment counts as played in proportion to the audio
      // received so far, so the prefix can be ahead of what was heard by up to one chunk.
      voice: { pieceDelayMs: 100 },
    });
    await assistantSpeaking(driver, 600);
    driver.say(speech(1000, 2000));
    await driver.run(2000, () => driver.eventsOf('user-interrupted').length > 0);
    await driver.run(200);
    expect(driver.eventsOf('user-interrupted')).toHaveLength(1);
    expect(driver.voice.aborted).toBe(1);
    const prefix = driver.pipeline.messages.find((m) => m.role === 'assistant')!.content!;
    expect(LONG_REPLY.startsWith(prefix)).toBe(true);
    expect(prefix.length).toBeLessThan(LONG_REPLY.length);
  });

  it('an acknowledgement does not interrupt with numWords 1', async () => {
    const driver = new PipelineDriver({
      script: [{ text: 'What are your hours?' }, { text: 'okay' }],
      model: { replies: [LONG_REPLY] },
      pipeline: { stopSpeakingPlan: { numWords: 1 } },
    });
    await assistantSpeaking(driver, 400);
    driver.say(speech(500, 2000));
    await driver.runUntilAssistant('stopped');

    expect(driver.eventsOf('user-interrupted')).toEqual([]);
    const finals = driver.eventsOf('transcript').filter((e) => e.transcriptType === 'final');
    expect(finals.map((e) => e.transcript)).toContain('okay');
    expect(driver.pipeline.messages.at(-1)).toEqual({ role: 'assistant', content: LONG_REPLY });
    // The acknowledgement is not a turn of its own.
    await driver.run(3000);
    expect(driver.model.requests).toHaveLength(1);
  });

  it('an interruption phrase interrupts at once with numWords 1', async () => {
    const driver = new PipelineDriver({
      script: [{ text: 'What are your hours?' }, { text: 'wait', partialAfterMs: 240 }],
      model: { replies: [LONG_REPLY, 'Yes?'] },
      pipeline: { stopSpeakingPlan: { numWords: 1 } },
    });
    await assistantSpeaking(driver, 400);
    const saidAt = driver.nowMs;
    driver.say(speech(500, 2000));
    await driver.run(2000, () => driver.eventsOf('user-interrupted').length > 0);

    const [interrupted] = driver.eventsOf('user-interrupted');
    expect(interrupted).toBeDefined();
    // Decided on the partial "wait", not on voice length or the final.
    expect(interrupted!.atMs - saidAt).toBeLessThanOrEqual(300);
    const prefix = driver.pipeline.messages.at(-1)!.content!;
    expect(LONG_REPLY.startsWith(prefix)).toBe(true);
    expect(prefix.length).toBeLessThan(LONG_REPLY.length);
  });

  it('the first message is not interruptible by default', async () => {
    const driver = new PipelineDriver({
      script: [{ text: 'Hello?' }],
      model: { replies: ['Hi.'] },
      pipeline: {
        firstMessageMode: 'assistant-speaks-first',
        firstMessage: LONG_REPLY,
      },
    });
    await driver.start();
    await driver.run(400);
    driver.say(speech(800));
    await driver.runUntilAssistant('stopped');
    expect(driver.eventsOf('user-interrupted')).toEqual([]);
    expect(driver.pipeline.messages[1]).toEqual({ role: 'assistant', content: LONG_REPLY });
  });
});
