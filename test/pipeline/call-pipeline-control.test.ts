import { describe, expect, it } from 'vitest';
import { ParlaError } from '../../src/core/errors.js';
import { PipelineDriver, speech } from './support/pipeline-driver.js';

const LONG =
  'Welcome to the clinic. We are open from eight in the morning until six in the evening, ' +
  'every day of the week except Sunday.';

function assistantFinals(driver: PipelineDriver): string[] {
  return driver
    .eventsOf('transcript')
    .filter((e) => e.role === 'assistant' && e.transcriptType === 'final')
    .map((e) => e.transcript);
}

describe('CallPipeline live control: say', () => {
  it('speaks at once when idle, with variables, and is not interruptible by default', async () => {
    const driver = new PipelineDriver({
      script: [{ text: 'Hello?' }],
      model: { replies: ['Yes?'] },
      pipeline: { variableValues: { name: 'Ada' } },
    });
    await driver.start();
    await driver.run(200);
    driver.pipeline.say(`Hello {{name}}. ${LONG}`);
    await driver.runUntilAssistant('started');
    driver.say(speech(800));
    await driver.runUntilAssistant('stopped');
    expect(driver.eventsOf('user-interrupted')).toEqual([]);
    expect(assistantFinals(driver)[0]).toBe(`Hello Ada. ${LONG}`);
    expect(driver.pipeline.messages[1]).toEqual({
      role: 'assistant',
      content: `Hello Ada. ${LONG}`,
    });
  });

  it('with interruptionsEnabled the customer can interrupt it', async () => {
    const driver = new PipelineDriver({
      script: [{ text: 'Wait, stop.' }],
      model: { replies: ['Sorry, go ahead.'] },
    });
    await driver.start();
    driver.pipeline.say(LONG, { interruptionsEnabled: true });
    await driver.runUntilAssistant('started');
    await driver.run(400);
    driver.say(speech(800));
    await driver.run(2000, () => driver.eventsOf('user-interrupted').length > 0);
    expect(driver.eventsOf('user-interrupted')).toHaveLength(1);
    const heard = driver.pipeline.messages.find((m) => m.role === 'assistant')!.content!;
    expect(LONG.startsWith(heard)).toBe(true);
    expect(heard.length).toBeLessThan(LONG.length);
  });

  it('waits for the current message, or cuts it with interruptAssistantEnabled', async () => {
    const queued = new PipelineDriver({
      pipeline: { firstMessageMode: 'assistant-speaks-first', firstMessage: LONG },
    });
    await queued.start();
    await queued.run(300);
    queued.pipeline.say('One more thing.');
    await queued.run(15_000, () => assistantFinals(queued).length === 2);
    expect(assistantFinals(queued)).toEqual([LONG, 'One more thing.']);

    const cutting = new PipelineDriver({
      pipeline: { firstMessageMode: 'assistant-speaks-first', firstMessage: LONG },
    });
    await cutting.start();
    await cutting.run(600);
    const cutAt = cutting.nowMs;
    cutting.pipeline.say('Sorry, an urgent message.', { interruptAssistantEnabled: true });
    await cutting.run(15_000, () => assistantFinals(cutting).length === 2);
    const [first, second] = assistantFinals(cutting);
    expect(LONG.startsWith(first!)).toBe(true);
    expect(first!.length).toBeLessThan(LONG.length / 2);
    expect(second).toBe('Sorry, an urgent message.');
    const updates = cutting.eventsOf('speech-update').filter((e) => e.role === 'assistant');
    expect(updates.map((e) => e.status)).toEqual(['started', 'stopped', 'started', 'stopped']);
    // Control between ticks carries the last tick's time.
    expect(updates[1]!.atMs).toBe(cutAt - 20);
    expect(cutting.eventsOf('user-interrupted')).toEqual([]);
  });

  it('endCallAfterSpoken ends the call once the message has played', async () => {
    const driver = new PipelineDriver();
    await driver.start();
    driver.pipeline.say('Goodbye for now.', { endCallAfterSpoken: true });
    await driver.run(10_000);
    const stopped = driver
      .eventsOf('speech-update')
      .find((e) => e.role === 'assistant' && e.status === 'stopped')!;
    expect(driver.eventsOf('call-ended')).toEqual([
      {
        type: 'call-ended',
        atMs: stopped.atMs,
        endedReason: 'assistant-ended-call-after-message-spoken',
      },
    ]);
  });

  it('rejects empty content with ERR_VALIDATION', async () => {
    const driver = new PipelineDriver();
    await driver.start();
    expect(() => driver.pipeline.say('  ')).toThrow(ParlaError);
    expect(() => driver.pipeline.say('x'.repeat(10_001))).toThrow(/at most/);
  });

  it('refuses more than 32 waiting messages', async () => {
    const driver = new PipelineDriver();
    await driver.start();
    for (let i = 0; i < 33; i++) {
      driver.pipeline.say(`Message ${i}.`);
    }
    // One is being said, 32 wait.
    expect(() => driver.pipeline.say('One too many.')).toThrow(/too many/);
    expect(() => driver.pipeline.addMessage({ role: 'user', content: 'Hi' })).toThrow(/too many/);
    driver.pipeline.addMessage({ role: 'user', content: 'Hi' }, false);
    await driver.run(2000);
    expect(() => driver.pipeline.say('Now there is room.')).not.toThrow();
  });
});

describe('CallPipeline live control: addMessage', () => {
  it('inserts silently when triggerResponseEnabled is false', async () => {
    const driver = new PipelineDriver({ model: { replies: ['Noted.'] } });
    await driver.start();
    driver.pipeline.addMessage({ role: 'system', content: 'The caller is a VIP.' }, false);
    await driver.run(2000);
    expect(driver.model.requests).toEqual([]);
    expect(driver.firstAudioAt()).toBeNull();
    expect(driver.pipeline.messages.at(-1)).toEqual({
      role: 'system',
      content: 'The caller is a VIP.',
    });
    expect(driver.eventsOf('conversation-update')).toHaveLength(1);
  });

  it('has the model reply by default, with the message in its request', async () => {
    const driver = new PipelineDriver({ model: { replies: ['Happy to help with that.'] } });
    await driver.start();
    driver.pipeline.addMessage({ role: 'user', content: 'Can I book for Monday?' });
    await driver.runUntilAssistant('stopped');
    expect(driver.model.requests[0]!.messages).toEqual([
      { role: 'system', content: 'You are helpful.' },
      { role: 'user', content: 'Can I book for Monday?' },
    ]);
    expect(driver.pipeline.messages.at(-1)).toEqual({
      role: 'assistant',
      content: 'Happy to help with that.',
    });
  });

  it('accepts assistant and tool messages and rejects malformed ones', async () => {
    const driver = new PipelineDriver();
    await driver.start();
    driver.pipeline.addMessage({ role: 'assistant', content: 'Earlier answer.' }, false);
    driver.pipeline.addMessage(
      { role: 'tool', content: '{"ok":true}', tool_call_id: 'call_1' },
      false,
    );
    expect(driver.pipeline.messages.slice(-2)).toEqual([
      { role: 'assistant', content: 'Earlier answer.' },
      { role: 'tool', content: '{"ok":true}', toolCallId: 'call_1' },
    ]);
    const bad = [
      null,
      { role: 'robot', content: 'x' },
      { role: 'user', content: 5 },
      { role: 'tool', content: 'no call id' },
    ];
    for (const message of bad) {
      expect(() => driver.pipeline.addMessage(message)).toThrow(ParlaError);
    }
  });
});

describe('CallPipeline live control: mutes and the first message', () => {
  it('a muted assistant sends silence while its message plays on', async () => {
    const driver = new PipelineDriver({
      pipeline: { firstMessageMode: 'assistant-speaks-first', firstMessage: LONG },
    });
    await driver.start();
    await driver.runUntilAssistant('started');
    await driver.run(400);
    driver.pipeline.setAssistantMuted(true);
    const mutedAt = driver.nowMs;
    await driver.run(1000);
    driver.pipeline.setAssistantMuted(false);
    const unmutedAt = driver.nowMs;
    await driver.runUntilAssistant('stopped');
    const during = driver.frames.filter((f) => f.atMs >= mutedAt && f.atMs < unmutedAt);
    expect(during.every((f) => f.samples === 0)).toBe(true);
    expect(driver.frames.some((f) => f.atMs >= unmutedAt && f.samples > 0)).toBe(true);
    // Playout went on: the message took as long as it would have unmuted (40 ms per char).
    const stopped = driver.eventsOf('speech-update').find((e) => e.status === 'stopped')!;
    expect(stopped.atMs).toBeGreaterThan(LONG.length * 40 - 200);
    expect(driver.pipeline.messages.at(-1)).toEqual({ role: 'assistant', content: LONG });
  });

  it('a muted customer is neither transcribed nor detected', async () => {
    const driver = new PipelineDriver({
      script: [{ text: 'Hello?' }],
      model: { replies: ['Hi.'] },
    });
    await driver.start();
    driver.pipeline.setCustomerMuted(true);
    const pushed = driver.transcriber.pushedSamples.length;
    driver.say(speech(1000));
    await driver.run(3000);
    expect(driver.transcriber.pushedSamples.length).toBe(pushed);
    expect(driver.eventsOf('speech-update')).toEqual([]);
    expect(driver.eventsOf('transcript')).toEqual([]);
    driver.pipeline.setCustomerMuted(false);
    driver.say(speech(1000));
    await driver.runUntilAssistant('stopped');
    expect(driver.pipeline.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant']);
  });

  it('sayFirstMessage speaks the first message on request', async () => {
    const driver = new PipelineDriver({
      pipeline: { firstMessageMode: 'assistant-waits-for-user', firstMessage: 'Hi {{who}}!' },
    });
    await driver.start();
    await driver.run(1000);
    expect(driver.firstAudioAt()).toBeNull();
    driver.pipeline.sayFirstMessage();
    await driver.runUntilAssistant('stopped');
    expect(driver.firstAudioAt()).toBeGreaterThanOrEqual(1000);
    expect(driver.pipeline.messages.at(-1)).toEqual({ role: 'assistant', content: 'Hi {{who}}!' });
  });
});
