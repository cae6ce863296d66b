import { describe, expect, it } from 'vitest';
import type { ModelToolCall } from '../../src/providers/llm/model-provider.js';
import type { ToolRunner } from '../../src/pipeline/call-pipeline.js';
import { PipelineDriver, speech, type DriverOptions } from './support/pipeline-driver.js';

const LOOKUP: ModelToolCall = { id: 'call_1', name: 'lookup', arguments: '{"day":"monday"}' };

async function callerTurn(options: DriverOptions): Promise<PipelineDriver> {
  const driver = new PipelineDriver({ script: [{ text: 'Am I booked on Monday?' }], ...options });
  await driver.start();
  await driver.run(200);
  driver.say(speech(1200));
  return driver;
}

function toolRunner(results: Record<string, unknown>) {
  const calls: { toolCalls: readonly ModelToolCall[]; turnId: number }[] = [];
  const run: ToolRunner = (toolCalls, turnId) => {
    calls.push({ toolCalls, turnId });
    return Promise.resolve(
      toolCalls.map((call) => ({
        toolCallId: call.id,
        name: call.name,
        result: results[call.name],
      })),
    );
  };
  return { calls, run };
}

describe('CallPipeline: tool calls', () => {
  it('runs the tools, records the round and asks the model again', async () => {
    const tools = toolRunner({ lookup: { slot: '9am' } });
    const driver = await callerTurn({
      model: {
        replies: [{ text: 'Let me check.', toolCalls: [LOOKUP] }, 'Yes, at nine on Monday.'],
      },
      pipeline: { runTools: tools.run },
    });
    await driver.run(
      10_000,
      () =>
        driver.pipeline.messages.at(-1)?.role === 'assistant' &&
        driver.pipeline.messages.at(-1)?.content === 'Yes, at nine on Monday.',
    );

    expect(driver.eventsOf('tool-calls')).toEqual([
      expect.objectContaining({ type: 'tool-calls', turnId: 1, toolCalls: [LOOKUP] }),
    ]);
    expect(tools.calls).toEqual([{ toolCalls: [LOOKUP], turnId: 1 }]);
    const round = [
      { role: 'assistant', content: 'Let me check.', toolCalls: [LOOKUP] },
      { role: 'tool', toolCallId: 'call_1', content: '{"slot":"9am"}' },
    ];
    expect(driver.model.requests).toHaveLength(2);
    expect(driver.model.requests[1]!.messages.slice(-2)).toEqual(round);
    expect(driver.pipeline.messages.slice(2)).toEqual([
      ...round,
      { role: 'assistant', content: 'Yes, at nine on Monday.' },
    ]);
    expect(driver.eventsOf('voice-input').map((e) => e.input)).toEqual([
      'Let me check.',
      'Yes, at nine on Monday.',
    ]);
    expect(
      driver
        .eventsOf('model-output')
        .map((e) => e.output)
        .join(''),
    ).toBe('Let me check.Yes, at nine on Monday.');
    // One assistant message from the caller's point of view: speech started and stopped once.
    const updates = driver.eventsOf('speech-update').filter((e) => e.role === 'assistant');
    expect(updates.map((e) => e.status)).toEqual(['started', 'stopped']);
  });

  it('without a runner every call gets the error "no tool runner"', async () => {
    const driver = await callerTurn({
      model: { replies: [{ toolCalls: [LOOKUP] }, 'Sorry, I cannot check right now.'] },
    });
    await driver.runUntilAssistant('stopped');
    expect(driver.model.requests[1]!.messages.slice(-2)).toEqual([
      { role: 'assistant', content: null, toolCalls: [LOOKUP] },
      { role: 'tool', toolCallId: 'call_1', content: 'Error: no tool runner' },
    ]);
  });

  it('runs at most five rounds in a turn', async () => {
    const tools = toolRunner({ lookup: 'still looking' });
    const driver = await callerTurn({
      model: { replies: Array.from({ length: 8 }, () => ({ toolCalls: [LOOKUP] })) },
      pipeline: { runTools: tools.run },
    });
    await driver.run(6000);
    expect(tools.calls).toHaveLength(5);
    expect(driver.model.requests).toHaveLength(6);
    expect(driver.eventsOf('tool-calls')).toHaveLength(5);
    expect(driver.pipeline.ended).toBe(false);
  });

  it('a barge-in aborts a pending round', async () => {
    const signals: AbortSignal[] = [];
    const runTools: ToolRunner = (_calls, _turnId, signal) => {
      signals.push(signal);
      return new Promise((resolve) =>
        signal.addEventListener('abort', () => resolve([{ toolCallId: 'call_1', result: 'late' }])),
      );
    };
    const driver = new PipelineDriver({
      script: [{ text: 'Am I booked on Monday?' }, { text: 'Actually, never mind.' }],
      model: {
        replies: [
          {
            text: 'Let me look that up for you, it may take a moment or two.',
            toolCalls: [LOOKUP],
          },
          'Alright.',
        ],
      },
      pipeline: { runTools },
    });
    await driver.start();
    await driver.run(200);
    driver.say(speech(1200));
    await driver.runUntilAssistant('started');
    await driver.run(300);
    driver.say(speech(1000, 2000));
    await driver.run(3000, () => driver.eventsOf('user-interrupted').length > 0);
    expect(driver.eventsOf('user-interrupted')).toHaveLength(1);
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(true);
    await driver.runUntilAssistant('stopped', 10_000, driver.nowMs + 20);
    // The round never completed: no tool messages; the next request answers the new words.
    expect(driver.pipeline.messages.some((m) => m.role === 'tool')).toBe(false);
    expect(driver.model.requests).toHaveLength(2);
    expect(driver.model.requests[1]!.messages.at(-1)).toEqual({
      role: 'user',
      content: 'Actually, never mind.',
    });
  });

  it('an end-call tool ends the call after what is queued has played', async () => {
    const tools = toolRunner({});
    const driver = await callerTurn({
      model: {
        replies: [
          { text: 'Goodbye!', toolCalls: [{ id: 'call_9', name: 'endCall', arguments: '{}' }] },
        ],
      },
      pipeline: { runTools: tools.run, endCallToolNames: ['endCall'] },
    });
    await driver.run(10_000);
    expect(tools.calls).toEqual([]);
    const stopped = driver
      .eventsOf('speech-update')
      .find((e) => e.role === 'assistant' && e.status === 'stopped')!;
    expect(driver.eventsOf('call-ended')).toEqual([
      { type: 'call-ended', atMs: stopped.atMs, endedReason: 'assistant-ended-call' },
    ]);
    expect(driver.model.requests).toHaveLength(1);
    expect(driver.pipeline.messages.at(-1)).toEqual({
      role: 'tool',
      toolCallId: 'call_9',
      content: 'The call is ending.',
    });
  });

  it('speaks endCallMessage before ending through an end-call tool', async () => {
    const driver = await callerTurn({
      model: { replies: [{ toolCalls: [{ id: 'c', name: 'endCall', arguments: '{}' }] }] },
      pipeline: { endCallToolNames: ['endCall'], endCallMessage: 'Thanks for calling.' },
    });
    await driver.run(10_000);
    expect(driver.eventsOf('voice-input').map((e) => e.input)).toEqual(['Thanks for calling.']);
    expect(driver.eventsOf('call-ended')[0]!.endedReason).toBe('assistant-ended-call');
    expect(driver.pipeline.messages.at(-1)).toEqual({
      role: 'assistant',
      content: 'Thanks for calling.',
    });
  });
});
