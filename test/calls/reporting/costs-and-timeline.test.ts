import { describe, expect, it } from 'vitest';
import { callCosts, type CallUsage } from '../../../src/calls/reporting/call-costs.js';
import { CallTimeline } from '../../../src/calls/reporting/call-timeline.js';
import {
  loadPriceTable,
  modelPrice,
  parsePriceTable,
} from '../../../src/calls/reporting/price-table.js';

const table = loadPriceTable();

const usage: CallUsage = {
  durationMs: 90_000,
  transportProvider: 'parla.websocket',
  transcriber: { provider: 'deepgram', model: 'nova-3' },
  voice: { provider: 'openai', voiceId: 'alloy' },
  model: { provider: 'openai', model: 'gpt-4o-mini-2024-07-18' },
  voiceCharacters: 2000,
  voiceAudioMs: 30_000,
  promptTokens: 10_000,
  completionTokens: 1000,
  cachedPromptTokens: 4000,
};

describe('price table', () => {
  it('loads config/prices.json and matches models by the longest prefix', () => {
    expect(modelPrice(table, 'openai', 'gpt-4o-mini-2024-07-18').promptPerMillionTokens).toBe(0.15);
    expect(modelPrice(table, 'openai', 'gpt-4o').promptPerMillionTokens).toBe(2.5);
    expect(modelPrice(table, 'openai', 'gpt-4o2')).toBe(table.model.default);
    expect(modelPrice(table, 'self-hosted', 'llama')).toBe(table.model.default);
  });

  it('rejects a malformed table naming each problem', () => {
    const broken = structuredClone(table) as any;
    broken.transport.default.perMinute = -1;
    delete broken.parla;
    expect(() => parsePriceTable(broken, 'prices.json')).toThrow(
      /prices\.json \/transport\/default\/perMinute/,
    );
    expect(() => parsePriceTable(broken, 'prices.json')).toThrow(/parla/);
  });
});

describe('callCosts', () => {
  it('prices each component the way its vendor bills and totals them', () => {
    const custom = parsePriceTable({
      ...structuredClone(table),
      transport: {
        default: { perMinute: 0 },
        providers: { 'parla.websocket': { perMinute: 0.01 } },
      },
      parla: { perMinute: 0.02 },
    });
    const { costs, cost } = callCosts(custom, usage);
    expect(costs).toEqual([
      { type: 'transport', provider: 'parla.websocket', minutes: 1.5, cost: 0.015 },
      {
        type: 'transcriber',
        transcriber: { provider: 'deepgram', model: 'nova-3' },
        minutes: 1.5,
        cost: 0.01155,
      },
      {
        type: 'model',
        model: { provider: 'openai', model: 'gpt-4o-mini-2024-07-18' },
        promptTokens: 10_000,
        completionTokens: 1000,
        cachedPromptTokens: 4000,
        // 6000 × 0.15 + 4000 × 0.075 + 1000 × 0.6, per million
        cost: 0.0018,
      },
      {
        type: 'voice',
        voice: { provider: 'openai', voiceId: 'alloy' },
        characters: 2000,
        minutes: 0.5,
        cost: 0.03,
      },
      { type: 'parla', subType: 'normal', minutes: 1.5, cost: 0.03 },
    ]);
    expect(cost).toBeCloseTo(0.015 + 0.01155 + 0.0018 + 0.03 + 0.03, 8);
  });

  it('bills per-minute voices by the audio played and leaves out absent components', () => {
    const { costs } = callCosts(table, {
      ...usage,
      voice: { provider: 'custom-voice' },
      transcriber: null,
      model: null,
    });
    expect(costs.map((item) => item.type)).toEqual(['transport', 'voice', 'parla']);
    expect(costs[1]).toMatchObject({ minutes: 0.5, cost: 0 });
  });
});

describe('CallTimeline', () => {
  const start = 1_700_000_000_000;

  it('builds timed user and bot turns, tool calls and results, and the transcript', () => {
    const timeline = new CallTimeline(start);
    timeline.onEvent(
      { type: 'conversation-update', atMs: 0, messages: [{ role: 'system', content: 'Be kind.' }] },
      start,
    );
    timeline.onEvent(
      { type: 'speech-update', atMs: 0, role: 'assistant', status: 'started', turn: 1 },
      start + 100,
    );
    timeline.onEvent(
      { type: 'speech-update', atMs: 0, role: 'assistant', status: 'stopped', turn: 1 },
      start + 1500,
    );
    timeline.onEvent(
      {
        type: 'transcript',
        atMs: 0,
        role: 'assistant',
        transcriptType: 'final',
        transcript: 'Hello!',
      },
      start + 1500,
    );
    timeline.onEvent(
      { type: 'speech-update', atMs: 0, role: 'user', status: 'started', turn: 1 },
      start + 2000,
    );
    timeline.onEvent(
      { type: 'transcript', atMs: 0, role: 'user', transcriptType: 'partial', transcript: 'Where' },
      start + 2300,
    );
    timeline.onEvent(
      {
        type: 'transcript',
        atMs: 0,
        role: 'user',
        transcriptType: 'final',
        transcript: 'Where is',
      },
      start + 2600,
    );
    timeline.onEvent(
      {
        type: 'transcript',
        atMs: 0,
        role: 'user',
        transcriptType: 'final',
        transcript: 'my order?',
      },
      start + 3000,
    );
    timeline.addToolCalls([{ id: 't1', name: 'lookup', arguments: '{}' }], start + 3500);
    timeline.addToolResult({ toolCallId: 't1', name: 'lookup', result: 'shipped' }, start + 3700);

    expect(timeline.messages()).toEqual([
      {
        role: 'system',
        message: 'Be kind.',
        time: start,
        secondsFromStart: 0,
        endTime: start,
        duration: 0,
      },
      {
        role: 'bot',
        message: 'Hello!',
        time: start + 100,
        secondsFromStart: 0.1,
        endTime: start + 1500,
        duration: 1400,
      },
      {
        role: 'user',
        message: 'Where is my order?',
        time: start + 2000,
        secondsFromStart: 2,
        endTime: start + 3000,
        duration: 1000,
      },
      {
        role: 'tool_calls',
        toolCalls: [{ id: 't1', type: 'function', function: { name: 'lookup', arguments: '{}' } }],
        message: '',
        time: start + 3500,
        secondsFromStart: 3.5,
      },
      {
        role: 'tool_call_result',
        toolCallId: 't1',
        name: 'lookup',
        result: 'shipped',
        time: start + 3700,
        secondsFromStart: 3.7,
      },
    ]);
    expect(timeline.openAIMessages()).toEqual([
      { role: 'system', content: 'Be kind.' },
      { role: 'assistant', content: 'Hello!' },
      { role: 'user', content: 'Where is my order?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 't1', type: 'function', function: { name: 'lookup', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 't1', content: 'shipped' },
    ]);
    expect(timeline.transcript({ enabled: true, assistantName: 'AI', userName: 'User' })).toBe(
      'AI: Hello!\nUser: Where is my order?',
    );
    expect(timeline.transcript({ enabled: false, assistantName: 'AI', userName: 'User' })).toBe('');
  });

  it('orders a bot turn cut off by the customer before the words that cut it', () => {
    const timeline = new CallTimeline(start);
    timeline.onEvent(
      { type: 'speech-update', atMs: 0, role: 'assistant', status: 'started', turn: 1 },
      start + 1000,
    );
    timeline.onEvent(
      { type: 'speech-update', atMs: 0, role: 'user', status: 'started', turn: 1 },
      start + 2000,
    );
    timeline.onEvent(
      { type: 'transcript', atMs: 0, role: 'user', transcriptType: 'final', transcript: 'Stop' },
      start + 2400,
    );
    timeline.onEvent(
      { type: 'speech-update', atMs: 0, role: 'assistant', status: 'stopped', turn: 1 },
      start + 2450,
    );
    timeline.onEvent(
      {
        type: 'transcript',
        atMs: 0,
        role: 'assistant',
        transcriptType: 'final',
        transcript: 'Our hours are',
      },
      start + 2450,
    );
    expect(timeline.messages().map((m) => [m.role, m.message])).toEqual([
      ['bot', 'Our hours are'],
      ['user', 'Stop'],
    ]);
  });

  it('keeps the pipeline metrics as performanceMetrics.turnLatencies in the platform shape', () => {
    const timeline = new CallTimeline(start);
    expect(timeline.performanceMetrics()).toEqual({ turnLatencies: [] });
    const version = timeline.version;
    const latency = (fields: Record<string, unknown>) => ({
      type: 'metrics',
      atMs: 0,
      latency: { turn: 1, ...fields },
    });
    timeline.onEvent(
      latency({
        endpointingMs: 500,
        transcriberFinalisationMs: 180,
        modelFirstTokenMs: 200,
        voiceFirstByteMs: 100,
        voiceToVoiceMs: 840,
      }),
      start,
    );
    // A first message has no caller turn before it: untimed stages are left out.
    timeline.onEvent(
      latency({
        endpointingMs: null,
        transcriberFinalisationMs: null,
        modelFirstTokenMs: 300,
        voiceFirstByteMs: null,
        voiceToVoiceMs: 860,
      }),
      start,
    );
    timeline.onEvent({ type: 'metrics', atMs: 0, latency: 'nonsense' }, start);
    expect(timeline.version).toBeGreaterThan(version);
    expect(timeline.performanceMetrics()).toEqual({
      turnLatencies: [
        {
          endpointingLatency: 500,
          transcriberLatency: 180,
          modelLatency: 200,
          voiceLatency: 100,
          turnLatency: 840,
        },
        { modelLatency: 300, turnLatency: 860 },
      ],
      endpointingLatencyAverage: 500,
      transcriberLatencyAverage: 180,
      modelLatencyAverage: 250,
      voiceLatencyAverage: 100,
      turnLatencyAverage: 850,
    });
  });
});
