import { describe, expect, it } from 'vitest';
import { PipelineDriver, speech, type DriverOptions } from './support/pipeline-driver.js';

function spoken(driver: PipelineDriver): string[] {
  return driver.eventsOf('voice-input').map((e) => e.input);
}

function assistantUpdates(driver: PipelineDriver, status: 'started' | 'stopped'): number[] {
  return driver
    .eventsOf('speech-update')
    .filter((e) => e.role === 'assistant' && e.status === status)
    .map((e) => e.atMs);
}

function greeting(pipeline: DriverOptions['pipeline']): PipelineDriver {
  return new PipelineDriver({
    script: [{ text: 'Sorry, I am here.' }],
    model: { replies: ['No problem.', 'Fine.'] },
    pipeline: {
      firstMessageMode: 'assistant-speaks-first',
      firstMessage: 'Hello.',
      silenceTimeoutSeconds: 600,
      ...pipeline,
    },
  });
}

describe('CallPipeline: idle messages (messagePlan)', () => {
  it('speaks an idle message idleTimeoutSeconds after the assistant stops, at most 3 times', async () => {
    const driver = greeting({
      messagePlan: { idleMessages: ['Are you still there?', 'Hello?'], idleTimeoutSeconds: 5 },
      random: () => 0.99,
    });
    await driver.start();
    await driver.run(40_000);
    expect(spoken(driver)).toEqual(['Hello.', 'Hello?', 'Hello?', 'Hello?']);
    const started = assistantUpdates(driver, 'started');
    const stopped = assistantUpdates(driver, 'stopped');
    for (let i = 1; i < started.length; i++) {
      const gap = started[i]! - stopped[i - 1]!;
      // 5 s of silence, then the voice's first byte (60 ms).
      expect(gap).toBeGreaterThanOrEqual(5000);
      expect(gap).toBeLessThanOrEqual(5100);
    }
    expect(driver.pipeline.messages.filter((m) => m.role === 'assistant')).toHaveLength(4);
  });

  it('the random function chooses the message', async () => {
    const driver = greeting({
      messagePlan: { idleMessages: ['Are you still there?', 'Hello?'], idleTimeoutSeconds: 5 },
      random: () => 0,
    });
    await driver.start();
    await driver.run(7000);
    expect(spoken(driver)).toEqual(['Hello.', 'Are you still there?']);
  });

  it('counts again after customer speech only with the reset flag', async () => {
    const run = async (reset: boolean): Promise<string[]> => {
      const driver = greeting({
        messagePlan: {
          idleMessages: ['Still there?'],
          idleTimeoutSeconds: 5,
          idleMessageMaxSpokenCount: 1,
          idleMessageResetCountOnUserSpeechEnabled: reset,
        },
      });
      await driver.start();
      await driver.run(7000);
      driver.say(speech(1000));
      await driver.run(15_000);
      return spoken(driver);
    };
    expect(await run(false)).toEqual(['Hello.', 'Still there?', 'No problem.']);
    expect(await run(true)).toEqual(['Hello.', 'Still there?', 'No problem.', 'Still there?']);
  });

  it('silenceTimeoutMessage is spoken before the silence-timed-out hang-up', async () => {
    const driver = greeting({
      silenceTimeoutSeconds: 10,
      messagePlan: { silenceTimeoutMessage: 'I will hang up now. Goodbye.' },
    });
    await driver.start();
    await driver.run(30_000);
    expect(spoken(driver)).toEqual(['Hello.', 'I will hang up now. Goodbye.']);
    const stopped = assistantUpdates(driver, 'stopped');
    expect(stopped).toHaveLength(2);
    expect(assistantUpdates(driver, 'started')[1]! - stopped[0]!).toBeGreaterThanOrEqual(10_000);
    expect(driver.eventsOf('call-ended')).toEqual([
      { type: 'call-ended', atMs: stopped[1], endedReason: 'silence-timed-out' },
    ]);
  });
});

describe('CallPipeline: customer.speech.timeout hooks', () => {
  it('says one of the exact texts after timeoutSeconds, triggerMaxCount times', async () => {
    const driver = greeting({
      hooks: [
        { on: 'call.ending', do: [{ type: 'say', exact: 'never said' }] },
        {
          on: 'customer.speech.timeout',
          options: { timeoutSeconds: 2, triggerMaxCount: 2 },
          do: [{ type: 'say', exact: ['Anyone there?', 'Hello, {{name}}?'] }],
        },
      ],
      variableValues: { name: 'Ada' },
      random: () => 0.5,
    });
    await driver.start();
    await driver.run(15_000);
    expect(spoken(driver)).toEqual(['Hello.', 'Hello, Ada?', 'Hello, Ada?']);
    const started = assistantUpdates(driver, 'started');
    const stopped = assistantUpdates(driver, 'stopped');
    expect(started[1]! - stopped[0]!).toBeGreaterThanOrEqual(2000);
    expect(started[1]! - stopped[0]!).toBeLessThanOrEqual(2100);
  });

  it('a prompt has the model write the message, with the prompt as an instruction', async () => {
    const driver = greeting({
      hooks: [
        {
          on: 'customer.speech.timeout',
          options: { timeoutSeconds: 3, triggerMaxCount: 1 },
          do: [{ type: 'say', prompt: 'Ask whether the caller is still there.' }],
        },
      ],
    });
    await driver.start();
    await driver.run(8000);
    expect(spoken(driver)).toEqual(['Hello.', 'No problem.']);
    expect(driver.model.requests[0]!.messages).toEqual([
      { role: 'system', content: 'You are helpful.' },
      { role: 'assistant', content: 'Hello.' },
      { role: 'system', content: 'Ask whether the caller is still there.' },
    ]);
    // The instruction is not kept in the history.
    expect(driver.pipeline.messages.filter((m) => m.role === 'system')).toHaveLength(1);
  });

  it('rejects options out of range', () => {
    expect(() =>
      greeting({
        hooks: [{ on: 'customer.speech.timeout', options: { triggerMaxCount: 11 }, do: [] }],
      }),
    ).toThrow(/triggerMaxCount/);
    expect(() => greeting({ messagePlan: { idleMessages: ['x'], idleTimeoutSeconds: 2 } })).toThrow(
      /idleTimeoutSeconds/,
    );
  });
});
