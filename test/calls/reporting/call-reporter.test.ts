import { createHmac } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ObservedEvent } from '../../../src/calls/call-observer.js';
import {
  createCallReporter,
  type CallReporterDeps,
} from '../../../src/calls/reporting/call-reporter.js';
import { loadPriceTable } from '../../../src/calls/reporting/price-table.js';
import { readWav } from '../../../src/media/codecs/wav.js';
import type { Doc } from '../../../src/store/resource-store.js';
import { useHarness } from '../../support/app-harness.js';
import { storeTargets } from '../../support/store-targets.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';

const h = useHarness(storeTargets()[0]!);
const prices = loadPriceTable();
let receiver: WebhookReceiver;
let clockMs: number;

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
});
afterAll(async () => {
  await receiver.close();
});
beforeEach(() => {
  receiver.clear();
  receiver.respond(() => ({ status: 200, body: {} }));
  clockMs = 0;
});

const startedAt = '2026-01-01T10:00:00.000Z';
const endedAt = '2026-01-01T10:01:30.000Z';

function baseCall(): Doc {
  return {
    id: `call-${Math.random().toString(36).slice(2)}`,
    type: 'parla.websocketCall',
    status: 'queued',
    assistantId: 'asst-1',
    customer: { number: '+15550001111', name: 'Ada' },
    transport: { provider: 'parla.websocket' },
  };
}

function reporter(overrides: Partial<CallReporterDeps> & { assistant: Doc }) {
  return createCallReporter({
    orgId: h.orgA,
    call: baseCall(),
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

describe('createCallReporter', () => {
  it('sends subscribed messages in order, answers tool calls, records and reports the call', async () => {
    receiver.respond((request) =>
      request.path === '/tool'
        ? { body: { results: [{ toolCallId: 'tc1', result: 'Order 42 shipped' }] } }
        : { body: {} },
    );
    const assistant = {
      name: 'Support',
      server: { url: `${receiver.url}/assistant`, headers: { 'x-env': 'test' } },
      serverMessages: [
        'status-update',
        'speech-update',
        'transcript[transcriptType="final"]',
        'conversation-update',
        'user-interrupted',
        'hang',
        'end-of-call-report',
      ],
      credentials: [{ provider: 'openai', apiKey: 'sk-secret' }],
      transcriber: { provider: 'deepgram', model: 'nova-3' },
      voice: { provider: 'openai', voiceId: 'alloy' },
      model: {
        provider: 'openai',
        model: 'gpt-4o-mini',
        tools: [
          {
            type: 'function',
            function: { name: 'lookup_order', parameters: { type: 'object', properties: {} } },
            server: { url: `${receiver.url}/tool`, headers: { 'x-tool-key': 'tool-secret' } },
          },
        ],
      },
      artifactPlan: { transcriptPlan: { assistantName: 'Bot', userName: 'Caller' } },
    };
    const call = baseCall();
    const r = reporter({
      assistant,
      call,
      phoneNumber: { id: 'pn-1', number: '+15550002222', server: { url: `${receiver.url}/phone` } },
      variableValues: { plan: 'gold' },
    });
    r.onStatus({ ...call, status: 'ringing' });
    r.onStatus({ ...call, status: 'in-progress', startedAt });
    r.onPipelineEvent(ev('speech-update', { role: 'assistant', status: 'started', turn: 1 }));
    r.onPipelineEvent(ev('voice-input', { input: 'Hello, how can I help?' }));
    r.onPipelineEvent(ev('model-output', { output: 'Hello', turnId: 1 }));
    r.onPipelineEvent(ev('speech-update', { role: 'assistant', status: 'stopped', turn: 1 }));
    r.onPipelineEvent(
      ev('transcript', {
        role: 'assistant',
        transcriptType: 'final',
        transcript: 'Hello, how can I help?',
      }),
    );
    r.onPipelineEvent(
      ev('conversation-update', {
        messages: [
          { role: 'system', content: 'You help.' },
          { role: 'assistant', content: 'Hello, how can I help?' },
        ],
      }),
    );
    r.onPipelineEvent(
      ev('transcript', { role: 'user', transcriptType: 'partial', transcript: 'Where' }),
    );
    r.onPipelineEvent(
      ev('transcript', { role: 'user', transcriptType: 'final', transcript: 'Where is order 42?' }),
    );
    r.onPipelineEvent(ev('model-usage', { promptTokens: 1200, completionTokens: 80 }));
    const results = await r.onToolCalls(
      [{ id: 'tc1', name: 'lookup_order', arguments: '{"id":42}' }],
      2,
    );
    expect(results).toEqual([
      { toolCallId: 'tc1', name: 'lookup_order', result: 'Order 42 shipped' },
    ]);
    r.onPipelineEvent(ev('user-interrupted', { turnId: 2 }));
    r.onPipelineEvent(ev('hang'));
    r.onPipelineEvent(ev('metrics', { latency: {} }));

    // One second of the caller (20 ms frames); the assistant answers 0.2 s of it at 0.5 s.
    for (let k = 0; k < 50; k++) {
      clockMs += 20;
      r.onAudio('user', new Int16Array(320).fill(100), 16_000);
      if (k >= 25 && k < 35) {
        r.onAudio('assistant', new Int16Array(320).fill(200), 16_000);
      }
    }

    const ended = {
      ...call,
      status: 'ended',
      endedReason: 'customer-ended-call',
      startedAt,
      endedAt,
    };
    r.onStatus(ended);
    const fields = await r.onEnded(ended);
    await r.drained();

    // Tool calls go to the tool's own server; everything else to the assistant's.
    const toolRequests = receiver.requests.filter((req) => req.path === '/tool');
    expect(toolRequests).toHaveLength(1);
    const toolMessage = toolRequests[0]!.body.message;
    expect(toolMessage.type).toBe('tool-calls');
    expect(toolMessage.toolCallList[0]).toMatchObject({
      id: 'tc1',
      type: 'function',
      function: { name: 'lookup_order', arguments: '{"id":42}' },
      name: 'lookup_order',
      arguments: { id: 42 },
    });
    expect(toolMessage.toolWithToolCallList[0].function.name).toBe('lookup_order');
    expect(toolMessage.toolWithToolCallList[0].toolCall.id).toBe('tc1');
    // The tool's own headers authenticate the request but never appear in the payload.
    expect(toolRequests[0]!.headers['x-tool-key']).toBe('tool-secret');
    expect(toolRequests[0]!.rawBody).not.toContain('tool-secret');

    const sent = receiver.requests.filter((req) => req.path === '/assistant');
    expect(sent.map((req) => req.type)).toEqual([
      'status-update',
      'status-update',
      'speech-update',
      'speech-update',
      'transcript[transcriptType="final"]',
      'conversation-update',
      'transcript[transcriptType="final"]',
      'user-interrupted',
      'hang',
      'status-update',
      'end-of-call-report',
    ]);
    expect(sent.map((req) => req.body.message.status).filter(Boolean)).toEqual(
      expect.arrayContaining(['ringing', 'in-progress', 'ended']),
    );
    const first = sent[0]!;
    expect(first.headers['x-env']).toBe('test');
    expect(typeof first.body.message.timestamp).toBe('number');
    expect(first.body.message.call.id).toBe(call.id);
    expect(first.body.message.customer).toEqual({ number: '+15550001111', name: 'Ada' });
    expect(first.body.message.phoneNumber.number).toBe('+15550002222');
    expect(first.body.message.assistant.name).toBe('Support');
    expect(first.body.message.assistant.credentials[0].apiKey).toBeUndefined();
    expect(first.rawBody).not.toContain('sk-secret');
    expect(sent[9]!.body.message.endedReason).toBe('customer-ended-call');
    const conversation = sent[5]!.body.message;
    expect(conversation.messagesOpenAIFormatted).toEqual([
      { role: 'system', content: 'You help.' },
      { role: 'assistant', content: 'Hello, how can I help?' },
    ]);
    expect(conversation.artifact.messages[0].role).toBe('system');

    // The end-of-call report and the fields to store.
    const report = sent[10]!.body.message;
    expect(report).toMatchObject({
      endedReason: 'customer-ended-call',
      startedAt,
      endedAt,
      analysis: fields.analysis,
      cost: fields.cost,
    });
    const artifact = fields.artifact as Doc;
    expect(report.artifact).toEqual(artifact);
    expect(artifact.transcript).toBe('Bot: Hello, how can I help?\nCaller: Where is order 42?');
    expect((artifact.messages as Doc[]).map((m) => m.role)).toEqual([
      'system',
      'bot',
      'user',
      'tool_calls',
      'tool_call_result',
    ]);
    expect(artifact.variableValues).toEqual({ plan: 'gold' });
    // No model access was given: the default plans say so instead of leaving analysis blank.
    expect(fields.analysis).toEqual({
      errors: ['summary', 'successEvaluation'].map((plan) => ({
        plan,
        code: 'analysis-unavailable',
        message: 'no model provider is configured for call analysis',
      })),
    });
    const costs = fields.costs as Doc[];
    expect(costs.map((c) => c.type)).toEqual([
      'transport',
      'transcriber',
      'model',
      'voice',
      'parla',
    ]);
    expect(costs[2]).toMatchObject({ promptTokens: 1200, completionTokens: 80 });
    expect(costs[3]).toMatchObject({ characters: 'Hello, how can I help?'.length });
    expect(costs[0]).toMatchObject({ minutes: 1.5 });
    expect(fields.cost).toBeGreaterThan(0);

    // The recordings download through the files API.
    const monoUrl = artifact.recordingUrl as string;
    const stereoUrl = artifact.stereoRecordingUrl as string;
    expect(artifact.recording).toEqual({ stereoUrl, mono: { combinedUrl: monoUrl } });
    const mono = await h.request({ method: 'GET', url: new URL(monoUrl).pathname });
    expect(mono.statusCode).toBe(200);
    expect(mono.headers['content-type']).toContain('audio/wav');
    const monoWav = readWav(mono.rawPayload);
    expect(monoWav).toMatchObject({ channelCount: 1, sampleRateHz: 16_000, durationMs: 1000 });
    expect(monoWav.samples[8000]).toBe(300);
    const stereo = await h.request({ method: 'GET', url: new URL(stereoUrl).pathname });
    expect(readWav(stereo.rawPayload)).toMatchObject({ channelCount: 2, durationMs: 1000 });
    const [, file] = await h.get(new URL(monoUrl).pathname.replace('/content', ''));
    expect(file).toMatchObject({
      status: 'done',
      mimetype: 'audio/wav',
      metadata: { callId: call.id },
    });

    // Every attempt is logged as a Webhook entry.
    await h.store.logs.flush();
    const logged = await h.store.logs.list(h.orgA, {
      type: 'Webhook',
      callId: call.id as string,
      page: 1,
      limit: 100,
      sortOrder: 'ASC',
    });
    expect(logged.total).toBe(12);
    expect(logged.results.map((entry) => entry.webhookType)).toContain('tool-calls');
    expect(logged.results[0]).toMatchObject({ responseHttpCode: 200, assistantId: 'asst-1' });
  });

  it('uses the defaults filter and the phone number server when the assistant has none', async () => {
    const r = reporter({
      assistant: { artifactPlan: { recordingEnabled: false } },
      phoneNumber: { server: { url: `${receiver.url}/phone` } },
    });
    r.onStatus({ status: 'ringing' });
    r.onPipelineEvent(
      ev('transcript', { role: 'user', transcriptType: 'final', transcript: 'Hi' }),
    );
    r.onPipelineEvent(ev('model-output', { output: 'Hi', turnId: 1 }));
    r.onPipelineEvent(ev('voice-input', { input: 'Hi' }));
    r.onPipelineEvent(ev('speech-update', { role: 'user', status: 'started', turn: 0 }));
    r.onAudio('user', new Int16Array(320), 16_000);
    const fields = await r.onEnded({ status: 'ended', endedReason: 'assistant-ended-call' });
    await r.drained();
    expect(receiver.requests.map((req) => [req.path, req.type])).toEqual([
      ['/phone', 'status-update'],
      ['/phone', 'speech-update'],
      ['/phone', 'end-of-call-report'],
    ]);
    expect((fields.artifact as Doc).recordingUrl).toBeUndefined();
  });

  it('turns tool server timeouts, bad replies and missing servers into error results', async () => {
    receiver.respond((request) =>
      request.path === '/slow'
        ? { delayMs: 4000, body: {} }
        : { status: 500, body: { results: [] } },
    );
    const tools = [
      {
        type: 'function',
        function: { name: 'slow' },
        server: { url: `${receiver.url}/slow`, timeoutSeconds: 1 },
      },
      { type: 'function', function: { name: 'broken' }, server: { url: `${receiver.url}/broken` } },
      { type: 'function', function: { name: 'nowhere' } },
      { type: 'endCall', function: { name: 'end_call' } },
    ];
    const r = reporter({ assistant: { artifactPlan: { recordingEnabled: false } }, tools });
    const results = await r.onToolCalls(
      [
        { id: 'a', name: 'slow', arguments: '{}' },
        { id: 'b', name: 'broken', arguments: '{}' },
        { id: 'c', name: 'nowhere', arguments: '{}' },
        { id: 'd', name: 'end_call', arguments: '{}' },
        { id: 'e', name: 'invented', arguments: '{}' },
      ],
      1,
    );
    expect(results.map((result) => [result.toolCallId, result.error])).toEqual([
      ['a', 'the tool server failed: no reply within 1 s'],
      ['b', 'the tool server failed: HTTP 500'],
      ['c', 'no server URL is set for tool nowhere'],
      ['d', 'tools of type endCall are not run through a server'],
      ['e', 'no tool named invented'],
    ]);
  });

  it('signs with the webhook credential stored in the org', async () => {
    const [status, credential] = await h.post('/credential', {
      provider: 'webhook',
      authenticationPlan: { type: 'hmac', secretKey: 'org-secret', algorithm: 'sha256' },
    });
    expect(status).toBe(201);
    const r = reporter({
      assistant: {
        server: { url: `${receiver.url}/signed`, credentialId: credential.id },
        artifactPlan: { recordingEnabled: false },
      },
    });
    r.onStatus({ status: 'ringing' });
    await r.drained();
    const [request] = receiver.requests;
    const timestamp = request!.headers['x-timestamp'] as string;
    const expected = createHmac('sha256', 'org-secret')
      .update(`${timestamp}.${request!.rawBody}`)
      .digest('hex');
    expect(request!.headers['x-signature']).toBe(expected);
  });

  it('keeps the order when a failing server is retried', async () => {
    let attempts = 0;
    receiver.respond(() => ({ status: attempts++ % 2 === 0 ? 503 : 200, body: {} }));
    const r = reporter({
      assistant: {
        server: {
          url: receiver.url,
          backoffPlan: { type: 'fixed', maxRetries: 2, baseDelaySeconds: 0 },
        },
        artifactPlan: { recordingEnabled: false },
      },
    });
    r.onStatus({ status: 'ringing' });
    r.onPipelineEvent(ev('speech-update', { role: 'user', status: 'started', turn: 0 }));
    r.onStatus({ status: 'in-progress' });
    await r.onEnded({ status: 'ended', endedReason: 'customer-ended-call' });
    await r.drained();
    const order = receiver.requests.map((req) => req.body.message.status ?? req.type);
    expect(order).toEqual([
      'ringing',
      'ringing',
      'started',
      'started',
      'in-progress',
      'in-progress',
      'assistant.started',
      'assistant.started',
      'end-of-call-report',
      'end-of-call-report',
    ]);
  });

  it('drops the oldest droppable messages when the server falls behind, never blocking', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    receiver.respond(async () => {
      await gate;
      return { body: {} };
    });
    const r = reporter({
      assistant: {
        server: { url: receiver.url },
        serverMessages: ['status-update', 'speech-update'],
        artifactPlan: { recordingEnabled: false },
      },
      maxQueuedMessages: 4,
    });
    r.onStatus({ status: 'ringing' });
    await receiver.waitForCount(1);
    for (let turn = 0; turn < 10; turn++) {
      r.onPipelineEvent(ev('speech-update', { role: 'user', status: 'started', turn }));
    }
    r.onStatus({ status: 'in-progress' });
    expect(r.droppedMessages).toBe(7);
    release();
    await r.drained();
    expect(
      receiver.requests.map((req) => req.body.message.turn ?? req.body.message.status),
    ).toEqual(['ringing', 7, 8, 9, 'in-progress']);
  });
});
