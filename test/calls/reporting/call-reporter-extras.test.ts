/**
 * The reporter's transfer-destination-request, legacy function-call, assistant.started, the
 * analysis after the call and a recording that starts when the call is in progress, against a
 * real webhook receiver, the fake OpenAI server and the store.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ObservedEvent } from '../../../src/calls/call-observer.js';
import { NO_PROVIDER_DEFAULTS } from '../../../src/calls/pipeline-call-params.js';
import {
  createCallReporter,
  type CallReporterDeps,
} from '../../../src/calls/reporting/call-reporter.js';
import { loadPriceTable } from '../../../src/calls/reporting/price-table.js';
import { readWav } from '../../../src/media/codecs/wav.js';
import type { Doc } from '../../../src/store/resource-store.js';
import { useHarness } from '../../support/app-harness.js';
import { FakeOpenAiServer } from '../../support/fake-openai-server.js';
import { storeTargets } from '../../support/store-targets.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';

const h = useHarness(storeTargets()[0]!);
const prices = loadPriceTable();
const model = new FakeOpenAiServer();
let receiver: WebhookReceiver;
let clockMs: number;

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  await model.start();
});
afterAll(async () => {
  await receiver.close();
  await model.close();
});
beforeEach(() => {
  receiver.clear();
  receiver.respond(() => ({ status: 200, body: {} }));
  model.reset();
  clockMs = 0;
});

const NO_RECORDING = { artifactPlan: { recordingEnabled: false } };

function reporter(overrides: Partial<CallReporterDeps> & { assistant: Doc }) {
  return createCallReporter({
    orgId: h.orgA,
    call: { id: `call-${Math.random().toString(36).slice(2)}`, type: 'parla.websocketCall' },
    store: h.store,
    filesDir: join(h.dataDir, 'files'),
    publicUrl: 'http://parla.test',
    prices,
    monotonicNowMs: () => clockMs,
    ...overrides,
  });
}

const ev = (type: string, fields: Record<string, unknown> = {}): ObservedEvent => ({
  type,
  atMs: 1000,
  ...fields,
});

describe('transfer-destination-request', () => {
  it('asks the call server by precedence and returns its checked destination', async () => {
    const destination = { type: 'number', number: '+14155550123' };
    receiver.respond((request) =>
      request.type === 'transfer-destination-request'
        ? { body: { destination, message: 'Transferring you now.' } }
        : { body: {} },
    );
    // No assistant server: the phone number's server gets it.
    const r = reporter({
      assistant: { name: 'Desk', ...NO_RECORDING },
      phoneNumber: { id: 'pn-1', server: { url: `${receiver.url}/phone` } },
    });
    const reply = await r.onTransferDestinationRequest!({
      toolCall: { id: 't1', name: 'transferCall', arguments: '{}' },
    });
    expect(reply).toEqual({ destination, message: 'Transferring you now.' });
    const [request] = receiver.messages('transfer-destination-request');
    expect(request!.path).toBe('/phone');
    expect(request!.body.message).toMatchObject({
      type: 'transfer-destination-request',
      assistant: { name: 'Desk' },
      call: { type: 'parla.websocketCall' },
    });
    expect(typeof request!.body.message.timestamp).toBe('number');
  });

  it('passes an error on, and gives neither for bad replies, failures or no subscription', async () => {
    receiver.respond((request) =>
      request.path === '/error'
        ? { body: { error: 'Nobody can take your call.' } }
        : request.path === '/bad'
          ? { body: { destination: { type: 'number', number: 'call me' } } }
          : { status: 500, body: { destination: { type: 'sip', sipUri: 'sip:a@b' } } },
    );
    const ask = (assistant: Doc) =>
      reporter({ assistant: { ...assistant, ...NO_RECORDING } }).onTransferDestinationRequest!({});
    expect(await ask({ server: { url: `${receiver.url}/error` } })).toEqual({
      error: 'Nobody can take your call.',
    });
    expect(await ask({ server: { url: `${receiver.url}/bad` } })).toEqual({});
    expect(await ask({ server: { url: `${receiver.url}/down` } })).toEqual({});
    const before = receiver.requests.length;
    expect(
      await ask({ server: { url: `${receiver.url}/error` }, serverMessages: ['status-update'] }),
    ).toEqual({});
    expect(await ask({})).toEqual({});
    expect(receiver.requests.length).toBe(before);
  });
});

describe('function-call (legacy)', () => {
  const lookup = {
    type: 'function',
    function: { name: 'lookup_order', parameters: { type: 'object', properties: {} } },
  };

  it('is sent instead of tool-calls when only function-call is subscribed', async () => {
    receiver.respond((request) =>
      request.type === 'function-call'
        ? { body: { result: `order ${request.body.message.functionCall.parameters.id} shipped` } }
        : { body: {} },
    );
    const r = reporter({
      assistant: {
        server: { url: receiver.url },
        serverMessages: ['function-call'],
        model: {
          provider: 'openai',
          tools: [lookup],
          // The legacy list is routed the same way.
          functions: [{ name: 'cancel_order', parameters: { type: 'object' } }],
        },
        ...NO_RECORDING,
      },
    });
    const results = await r.onToolCalls(
      [
        { id: 'a', name: 'lookup_order', arguments: '{"id":42}' },
        { id: 'b', name: 'cancel_order', arguments: '{"id":7}' },
      ],
      1,
    );
    expect(results).toEqual([
      { toolCallId: 'a', name: 'lookup_order', result: 'order 42 shipped' },
      { toolCallId: 'b', name: 'cancel_order', result: 'order 7 shipped' },
    ]);
    expect(receiver.requests.map((req) => req.type)).toEqual(['function-call', 'function-call']);
    expect(receiver.requests.map((req) => req.body.message.functionCall)).toEqual([
      { name: 'lookup_order', parameters: { id: 42 } },
      { name: 'cancel_order', parameters: { id: 7 } },
    ]);
  });

  it('gives way to tool-calls when both are subscribed, and errors when neither is', async () => {
    receiver.respond(() => ({ body: { results: [{ toolCallId: 'a', result: 'ok' }] } }));
    const both = reporter({
      assistant: {
        server: { url: receiver.url },
        serverMessages: ['function-call', 'tool-calls'],
        model: { provider: 'openai', tools: [lookup] },
        ...NO_RECORDING,
      },
    });
    expect(await both.onToolCalls([{ id: 'a', name: 'lookup_order', arguments: '{}' }], 1)).toEqual(
      [{ toolCallId: 'a', name: 'lookup_order', result: 'ok' }],
    );
    expect(receiver.requests.map((req) => req.type)).toEqual(['tool-calls']);
    const neither = reporter({
      assistant: {
        server: { url: receiver.url },
        serverMessages: ['status-update'],
        model: { provider: 'openai', tools: [lookup] },
        ...NO_RECORDING,
      },
    });
    const [result] = await neither.onToolCalls(
      [{ id: 'a', name: 'lookup_order', arguments: '{}' }],
      1,
    );
    expect(result!.error).toBe(
      'neither tool-calls nor function-call is in the assistant serverMessages',
    );
  });
});

describe('assistant.started, analysis and the recording', () => {
  it('announces the assistant, analyses the call, prices the analysis and records from in-progress', async () => {
    model.fallback = (request) =>
      JSON.stringify(request.body?.messages).includes('You judge calls')
        ? { chunks: ['true'], usage: { prompt_tokens: 30, completion_tokens: 1 } }
        : { chunks: ['A table was booked.'], usage: { prompt_tokens: 20, completion_tokens: 5 } };
    const assistant = {
      name: 'Bookings',
      server: { url: receiver.url },
      serverMessages: ['status-update', 'assistant.started', 'end-of-call-report'],
      model: {
        provider: 'openai',
        model: 'gpt-4o-mini',
        messages: [{ role: 'system', content: 'You take bookings.' }],
      },
    };
    const r = reporter({
      assistant,
      callParams: {
        credentials: { openai: { apiKey: 'sk-from-credential' } },
        providers: { ...NO_PROVIDER_DEFAULTS, openaiBaseUrl: model.url },
      },
    });
    r.onStatus({ status: 'ringing' });
    // Four seconds of the caller while ringing: not part of the recording.
    for (let k = 0; k < 200; k++) {
      clockMs += 20;
      r.onAudio('user', new Int16Array(320).fill(500), 16_000);
    }
    r.onStatus({ status: 'in-progress', startedAt: new Date().toISOString() });
    // The first audio of the call comes 0.5 s after it went in progress; then 1 s of it.
    clockMs += 500;
    for (let k = 0; k < 50; k++) {
      clockMs += 20;
      r.onAudio('user', new Int16Array(320).fill(100), 16_000);
    }
    r.onPipelineEvent(ev('speech-update', { role: 'assistant', status: 'started', turn: 0 }));
    r.onPipelineEvent(
      ev('transcript', { role: 'assistant', transcriptType: 'final', transcript: 'Hello.' }),
    );
    r.onPipelineEvent(
      ev('transcript', { role: 'user', transcriptType: 'final', transcript: 'Table for two.' }),
    );
    const ended = { status: 'ended', endedReason: 'customer-ended-call' };
    r.onStatus(ended);
    const fields = await r.onEnded(ended);
    await r.drained();

    expect(receiver.requests.map((req) => req.body.message.status ?? req.type)).toEqual([
      'ringing',
      'in-progress',
      'assistant.started',
      'ended',
      'end-of-call-report',
    ]);
    const started = receiver.messages('assistant.started')[0]!.body.message;
    expect(started.newAssistant).toMatchObject({ name: 'Bookings' });

    expect(fields.analysis).toEqual({ summary: 'A table was booked.', successEvaluation: 'true' });
    const report = receiver.messages('end-of-call-report')[0]!.body.message;
    expect(report.analysis).toEqual(fields.analysis);
    expect(model.requests.map((req) => req.headers.authorization)).toEqual([
      'Bearer sk-from-credential',
      'Bearer sk-from-credential',
    ]);
    const analysisCosts = (fields.costs as Doc[]).filter((c) => c.type === 'analysis');
    expect(analysisCosts.map((c) => c.analysisType).sort()).toEqual([
      'successEvaluation',
      'summary',
    ]);
    expect(analysisCosts.find((c) => c.analysisType === 'summary')).toMatchObject({
      model: { provider: 'openai', model: 'gpt-4o-mini' },
      promptTokens: 20,
      completionTokens: 5,
    });
    const total = (fields.costs as Doc[]).reduce((sum, c) => sum + (c.cost as number), 0);
    expect(fields.cost).toBeCloseTo(total, 8);

    // The recording: 0.5 s of silence from in-progress, then the second of the call's audio.
    const monoUrl = (fields.artifact as Doc).recordingUrl as string;
    const mono = await h.request({ method: 'GET', url: new URL(monoUrl).pathname });
    const wav = readWav(mono.rawPayload);
    expect(wav.durationMs).toBe(1500);
    expect(wav.samples.slice(0, 8000).every((sample) => sample === 0)).toBe(true);
    expect(wav.samples[8000]).toBe(100);
    expect(wav.samples.includes(500)).toBe(false);
  });

  it('keeps recording through forwarding, sends the conversation with it, and starts once', async () => {
    const r = reporter({
      assistant: {
        server: { url: receiver.url },
        serverMessages: ['status-update', 'assistant.started'],
        analysisPlan: {
          summaryPlan: { enabled: false },
          successEvaluationPlan: { enabled: false },
        },
      },
    });
    const destination = { type: 'number', number: '+14155550123' };
    const second = (value: number) => {
      for (let k = 0; k < 50; k++) {
        clockMs += 20;
        r.onAudio('user', new Int16Array(320).fill(value), 16_000);
      }
    };
    r.onStatus({ status: 'ringing' });
    r.onStatus({ status: 'in-progress' });
    second(100);
    r.onPipelineEvent(
      ev('transcript', { role: 'user', transcriptType: 'final', transcript: 'Put me through.' }),
    );
    r.onStatus({ status: 'forwarding', destination });
    second(200);
    r.onStatus({ status: 'in-progress' });
    second(300);
    const ended = { status: 'ended', endedReason: 'customer-ended-call' };
    r.onStatus(ended);
    // Audio after the end is not recorded.
    second(400);
    const fields = await r.onEnded(ended);
    await r.drained();
    expect(receiver.requests.map((req) => req.body.message.status ?? req.type)).toEqual([
      'ringing',
      'in-progress',
      'assistant.started',
      'forwarding',
      'in-progress',
      'ended',
    ]);
    const forwarding = receiver.requests[3]!.body.message;
    expect(forwarding).toMatchObject({
      destination,
      transcript: 'User: Put me through.',
      messages: [{ role: 'user', message: 'Put me through.' }],
      messagesOpenAIFormatted: [{ role: 'user', content: 'Put me through.' }],
    });
    expect(fields.analysis).toEqual({});
    const monoUrl = (fields.artifact as Doc).recordingUrl as string;
    const mono = await h.request({ method: 'GET', url: new URL(monoUrl).pathname });
    const wav = readWav(mono.rawPayload);
    expect(wav.durationMs).toBe(3000);
    expect([wav.samples[0], wav.samples[16_000], wav.samples[32_000]]).toEqual([100, 200, 300]);
  });
});
