import { describe, expect, it } from 'vitest';
import { PipelineDriver, type DriverOptions } from './support/pipeline-driver.js';

function spoken(driver: PipelineDriver): string[] {
  return driver.eventsOf('voice-input').map((e) => e.input);
}

function call(pipeline: DriverOptions['pipeline']): PipelineDriver {
  return new PipelineDriver({
    model: { replies: ['We are out of time, goodbye.'] },
    pipeline: {
      firstMessageMode: 'assistant-speaks-first',
      firstMessage: 'Hello.',
      ...pipeline,
    },
  });
}

const onEnding = (oneOf: string[] | null, exact: string | string[]) => ({
  on: 'call.ending',
  ...(oneOf === null ? {} : { filters: [{ type: 'oneOf', key: 'call.endedReason', oneOf }] }),
  do: [{ type: 'say', exact }],
});

describe('CallPipeline: call.ending hooks', () => {
  it('says the hook message when the silence timeout ends the call, then ends it', async () => {
    const driver = call({
      silenceTimeoutSeconds: 10,
      messagePlan: { silenceTimeoutMessage: 'Are you there?' },
      hooks: [
        onEnding(['exceeded-max-duration'], 'Time is up.'),
        onEnding(['silence-timed-out'], 'Goodbye, {{name}}.'),
      ],
      variableValues: { name: 'Ada' },
    });
    await driver.start();
    await driver.run(30_000);
    expect(spoken(driver)).toEqual(['Hello.', 'Are you there?', 'Goodbye, Ada.']);
    const stopped = driver
      .eventsOf('speech-update')
      .filter((e) => e.role === 'assistant' && e.status === 'stopped');
    expect(driver.eventsOf('call-ended')).toEqual([
      { type: 'call-ended', atMs: stopped.at(-1)!.atMs, endedReason: 'silence-timed-out' },
    ]);
  });

  it('cuts what is being said at the maximum duration, says the hook message, then ends', async () => {
    const driver = call({
      maxDurationSeconds: 1,
      firstMessage: 'This is a very long greeting that will not fit into one second of call time.',
      hooks: [onEnding(['silence-timed-out'], 'Never said.'), onEnding(null, ['Time is up.'])],
    });
    await driver.start();
    await driver.run(10_000);
    expect(spoken(driver).slice(1)).toEqual(['Time is up.']);
    const [ended] = driver.eventsOf('call-ended');
    expect(ended?.endedReason).toBe('exceeded-max-duration');
    expect(ended!.atMs).toBeGreaterThan(1000);
    // The greeting was cut where it was heard.
    const said = driver.pipeline.messages.filter((m) => m.role === 'assistant');
    expect(said.map((m) => m.content)).toEqual([expect.stringMatching(/^This is/), 'Time is up.']);
    expect(said[0]!.content!.length).toBeLessThan(40);
  });

  it('a prompt action has the model write the farewell', async () => {
    const driver = call({
      maxDurationSeconds: 2,
      hooks: [{ on: 'call.ending', do: [{ type: 'say', prompt: 'Say goodbye.' }] }],
    });
    await driver.start();
    await driver.run(10_000);
    expect(spoken(driver)).toEqual(['Hello.', 'We are out of time, goodbye.']);
    expect(driver.model.requests[0]!.messages.at(-1)).toEqual({
      role: 'system',
      content: 'Say goodbye.',
    });
    expect(driver.eventsOf('call-ended')[0]?.endedReason).toBe('exceeded-max-duration');
  });

  it('ends at once when no hook matches the reason', async () => {
    const driver = call({
      maxDurationSeconds: 2,
      hooks: [onEnding(['silence-timed-out'], 'Never said.')],
    });
    await driver.start();
    await driver.run(10_000);
    expect(spoken(driver)).toEqual(['Hello.']);
    expect(driver.eventsOf('call-ended')).toEqual([
      { type: 'call-ended', atMs: 2000, endedReason: 'exceeded-max-duration' },
    ]);
  });

  it('rejects a malformed filter', () => {
    expect(() =>
      call({ hooks: [{ on: 'call.ending', filters: [{ type: 'oneOf', key: 'x', oneOf: [] }] }] }),
    ).toThrow(/hooks\[0\]\.filters\[0\]/);
  });
});

describe('CallPipeline: model.messages', () => {
  it('starts the conversation with the configured messages after the system prompt', async () => {
    const driver = new PipelineDriver({
      model: { replies: ['Sure.'] },
      pipeline: {
        firstMessageMode: 'assistant-speaks-first-with-model-generated-message',
        modelConfig: {
          model: 'gpt-test',
          systemPrompt: 'You are helpful.',
          apiKey: null,
          messages: [
            { role: 'user', content: 'I am {{name}}.' },
            { role: 'assistant', content: 'Nice to meet you.' },
          ],
        },
        variableValues: { name: 'Ada' },
      },
    });
    await driver.start();
    await driver.run(2000);
    expect(driver.model.requests[0]!.messages).toEqual([
      { role: 'system', content: 'You are helpful.' },
      { role: 'user', content: 'I am Ada.' },
      { role: 'assistant', content: 'Nice to meet you.' },
    ]);
  });
});
