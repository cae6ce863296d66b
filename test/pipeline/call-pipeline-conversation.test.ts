import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../src/providers/provider-error.js';
import { PipelineDriver, speech, type DriverOptions } from './support/pipeline-driver.js';

/** One caller turn; returns the driver once the reply has been spoken or the call ended. */
async function oneTurn(options: DriverOptions): Promise<PipelineDriver> {
  const driver = new PipelineDriver(options);
  await driver.start();
  await driver.run(200);
  driver.say(speech(1200));
  await driver.run(10_000, () =>
    driver.eventsOf('speech-update').some((e) => e.role === 'assistant' && e.status === 'stopped'),
  );
  return driver;
}

function endedReasons(driver: PipelineDriver): string[] {
  return driver.eventsOf('call-ended').map((e) => e.endedReason);
}

describe('CallPipeline: endpointing', () => {
  it('ends the turn sooner after punctuation than without', async () => {
    const plan = { startSpeakingPlan: { waitSeconds: 0 } };
    const punctuated = await oneTurn({
      script: [{ text: 'Move it to Thursday.' }],
      model: { replies: ['Done.'] },
      pipeline: plan,
    });
    const bare = await oneTurn({
      script: [{ text: 'Move it to Thursday' }],
      model: { replies: ['Done.'] },
      pipeline: plan,
    });
    const withPunctuation = punctuated.eventsOf('metrics')[0]!.latency.endpointingMs!;
    const without = bare.eventsOf('metrics')[0]!.latency.endpointingMs!;
    // onPunctuationSeconds 0.1 (decided when VAD confirms the stop) vs onNoPunctuationSeconds 1.5.
    expect(withPunctuation).toBeLessThan(700);
    expect(without).toBeGreaterThanOrEqual(1500);
    expect(without).toBeLessThan(1540);
  });

  it('holds the first audio until waitSeconds after the end of turn', async () => {
    const driver = await oneTurn({
      script: [{ text: 'Move it to Thursday.' }],
      model: { replies: ['Done.'], firstTokenDelayMs: 0 },
      pipeline: { startSpeakingPlan: { waitSeconds: 2 } },
    });
    const latency = driver.eventsOf('metrics')[0]!.latency;
    expect(latency.voiceToVoiceMs - latency.endpointingMs!).toBeGreaterThanOrEqual(2000);
    expect(latency.voiceToVoiceMs - latency.endpointingMs!).toBeLessThan(2040);
  });
});

describe('CallPipeline: call limits', () => {
  it('ends with exceeded-max-duration', async () => {
    const driver = new PipelineDriver({ pipeline: { maxDurationSeconds: 2 } });
    await driver.start();
    await driver.run(5000);
    expect(endedReasons(driver)).toEqual(['exceeded-max-duration']);
    expect(driver.eventsOf('call-ended')[0]!.atMs).toBe(2000);
    expect(driver.transcriber.closed).toBe(true);
  });

  it('ends with silence-timed-out, counted from the last speech', async () => {
    const driver = new PipelineDriver({
      script: [{ text: 'Hello?' }],
      model: { replies: ['Hi there.'] },
      pipeline: { silenceTimeoutSeconds: 3 },
    });
    await driver.start();
    await driver.run(1000);
    driver.say(speech(800));
    await driver.run(20_000);
    expect(endedReasons(driver)).toEqual(['silence-timed-out']);
    const stoppedAt = driver
      .eventsOf('speech-update')
      .filter((e) => e.role === 'assistant' && e.status === 'stopped')[0]!.atMs;
    const endedAt = driver.eventsOf('call-ended')[0]!.atMs;
    expect(endedAt - stoppedAt).toBeGreaterThanOrEqual(2980);
    expect(endedAt - stoppedAt).toBeLessThanOrEqual(3020);
  });

  it('ends after playout when the assistant says an end-call phrase', async () => {
    const driver = await oneTurn({
      script: [{ text: 'That is all, thanks.' }],
      model: { replies: ['You are welcome. Goodbye!'] },
      pipeline: { endCallPhrases: ['goodbye'] },
    });
    expect(endedReasons(driver)).toEqual(['assistant-said-end-call-phrase']);
    const stopped = driver
      .eventsOf('speech-update')
      .find((e) => e.role === 'assistant' && e.status === 'stopped')!;
    expect(driver.eventsOf('call-ended')[0]!.atMs).toBe(stopped.atMs);
  });
});

describe('CallPipeline: first message modes', () => {
  const variableValues = { name: 'Ada' };

  it('assistant-speaks-first speaks firstMessage at once, with variables', async () => {
    const driver = new PipelineDriver({
      pipeline: {
        firstMessageMode: 'assistant-speaks-first',
        firstMessage: 'Hello {{name}}, how can I help?',
        variableValues,
        modelConfig: { model: 'gpt-test', systemPrompt: 'Caller is {{ name }}.', apiKey: null },
      },
    });
    await driver.start();
    await driver.runUntilAssistant('stopped');
    expect(driver.eventsOf('voice-input').map((e) => e.input)).toEqual([
      'Hello Ada, how can I help?',
    ]);
    expect(driver.firstAudioAt()).toBeLessThanOrEqual(100);
    expect(driver.model.requests).toEqual([]);
    expect(driver.pipeline.messages).toEqual([
      { role: 'system', content: 'Caller is Ada.' },
      { role: 'assistant', content: 'Hello Ada, how can I help?' },
    ]);
  });

  it('assistant-waits-for-user stays silent until the caller speaks', async () => {
    const driver = new PipelineDriver({
      script: [{ text: 'Hi.' }],
      model: { replies: ['Hello, how can I help?'] },
      pipeline: { firstMessageMode: 'assistant-waits-for-user', firstMessage: 'Hello!' },
    });
    await driver.start();
    await driver.run(2000);
    expect(driver.firstAudioAt()).toBeNull();
    expect(driver.model.requests).toEqual([]);
    driver.say(speech(800));
    await driver.runUntilAssistant('stopped');
    expect(driver.firstAudioAt()).toBeGreaterThan(2000);
    expect(driver.model.requests).toHaveLength(1);
  });

  it('assistant-speaks-first-with-model-generated-message asks the model first', async () => {
    const driver = new PipelineDriver({
      model: { replies: ['Good morning, this is the clinic.'] },
      pipeline: { firstMessageMode: 'assistant-speaks-first-with-model-generated-message' },
    });
    await driver.start();
    await driver.runUntilAssistant('stopped');
    expect(driver.model.requests[0]!.messages).toEqual([
      { role: 'system', content: 'You are helpful.' },
    ]);
    expect(driver.pipeline.messages.at(-1)).toEqual({
      role: 'assistant',
      content: 'Good morning, this is the clinic.',
    });
  });
});

describe('CallPipeline: provider failures', () => {
  it('a model error ends the call with its vendor reason', async () => {
    const driver = await oneTurn({
      script: [{ text: 'Hello?' }],
      model: { replies: [], failWith: new ProviderError('openai', 'bad key', 401) },
    });
    expect(endedReasons(driver)).toEqual(['pipeline-error-openai-401-unauthorized']);
  });

  it('a voice error ends the call', async () => {
    const driver = new PipelineDriver({
      script: [{ text: 'Hello?' }],
      model: { replies: ['Hi there.'] },
    });
    driver.voice.failWith = new Error('socket closed');
    await driver.start();
    await driver.run(200);
    driver.say(speech(800));
    await driver.run(5000);
    expect(endedReasons(driver)).toEqual(['pipeline-error-cartesia-voice-failed']);
  });

  it('a transcriber that cannot connect ends the call', async () => {
    const driver = new PipelineDriver();
    driver.transcriber.failOpen = new ProviderError('fake-stt', 'refused', 403);
    await driver.start();
    await driver.run(100);
    expect(endedReasons(driver)).toEqual(['pipeline-error-fake-stt-transcriber-failed']);
  });
});
