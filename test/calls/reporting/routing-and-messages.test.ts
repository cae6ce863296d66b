import { describe, expect, it } from 'vitest';
import { MessageQueue } from '../../../src/calls/reporting/message-queue.js';
import {
  eventMessage,
  parseToolCallsReply,
  toolCallItem,
  toolCallsFields,
} from '../../../src/calls/reporting/server-messages.js';
import {
  chooseServer,
  FINAL_TRANSCRIPT_TYPE,
  sendAs,
  subscribedTypes,
} from '../../../src/calls/reporting/server-routing.js';

const calls = [
  { id: 'c1', name: 'lookup', arguments: '{"order":42}' },
  { id: 'c2', name: 'book', arguments: 'not json' },
];

describe('server precedence', () => {
  const assistant = { server: { url: 'http://assistant' } };
  const phoneNumber = { server: { url: 'http://phone' } };
  const orgServer = { url: 'http://org' };

  it('picks tool, then assistant, then phone number, then org', () => {
    const all = { assistant, phoneNumber, orgServer };
    expect(chooseServer(all, { server: { url: 'http://tool' } })?.url).toBe('http://tool');
    expect(chooseServer(all)?.url).toBe('http://assistant');
    expect(chooseServer({ assistant: {}, phoneNumber, orgServer })?.url).toBe('http://phone');
    expect(chooseServer({ assistant: {}, phoneNumber: {}, orgServer })?.url).toBe('http://org');
    expect(chooseServer({ assistant: {}, phoneNumber: null, orgServer: null })).toBeNull();
  });

  it('skips servers without a url', () => {
    expect(chooseServer({ assistant: { server: { url: '' } }, phoneNumber })?.url).toBe(
      'http://phone',
    );
  });
});

describe('serverMessages filtering', () => {
  it('uses the platform defaults when the assistant names none', () => {
    const types = subscribedTypes({});
    expect(types.has('end-of-call-report')).toBe(true);
    expect(types.has('status-update')).toBe(true);
    expect(types.has('transcript')).toBe(false);
    expect(types.has('model-output')).toBe(false);
    expect(sendAs(types, 'transcript', 'final')).toBeNull();
  });

  it('sends final transcripts only, with the literal type, in the final-only form', () => {
    const types = subscribedTypes({ serverMessages: [FINAL_TRANSCRIPT_TYPE] });
    expect(sendAs(types, 'transcript', 'partial')).toBeNull();
    expect(sendAs(types, 'transcript', 'final')).toBe('transcript[transcriptType="final"]');
    expect(sendAs(types, 'speech-update')).toBeNull();
  });

  it('sends both kinds as plain transcript when `transcript` is subscribed', () => {
    const types = subscribedTypes({ serverMessages: ['transcript', FINAL_TRANSCRIPT_TYPE] });
    expect(sendAs(types, 'transcript', 'partial')).toBe('transcript');
    expect(sendAs(types, 'transcript', 'final')).toBe('transcript');
  });
});

describe('message builders', () => {
  it('maps pipeline events to their message fields', () => {
    expect(
      eventMessage({ type: 'speech-update', atMs: 1, role: 'user', status: 'started', turn: 2 }),
    ).toEqual({
      type: 'speech-update',
      fields: { status: 'started', role: 'user', turn: 2 },
      keep: false,
    });
    expect(
      eventMessage({ type: 'model-output', atMs: 1, output: 'Hi', turnId: 3 })?.fields,
    ).toEqual({ output: 'Hi', turnId: 3 });
    expect(eventMessage({ type: 'voice-input', atMs: 1, input: 'Hello.' })?.fields).toEqual({
      input: 'Hello.',
    });
    expect(eventMessage({ type: 'user-interrupted', atMs: 1, turnId: 4 })?.fields).toEqual({
      turnId: 4,
    });
    expect(eventMessage({ type: 'hang', atMs: 1 })?.type).toBe('hang');
    expect(eventMessage({ type: 'metrics', atMs: 1 })).toBeNull();
  });

  it('emits the union tool call shape and the tool definitions with their call', () => {
    expect(toolCallItem(calls[0]!)).toEqual({
      id: 'c1',
      type: 'function',
      function: { name: 'lookup', arguments: '{"order":42}' },
      name: 'lookup',
      arguments: { order: 42 },
      parameters: { order: 42 },
    });
    expect(toolCallItem(calls[1]!).arguments).toBe('not json');
    const tool = { type: 'function', function: { name: 'lookup', description: 'Find' } };
    const fields = toolCallsFields([calls[0]!], new Map([['lookup', tool]]));
    expect(fields.toolWithToolCallList).toEqual([{ ...tool, toolCall: toolCallItem(calls[0]!) }]);
  });
});

describe('tool-calls replies', () => {
  const ok = (reply: unknown) => ({ ok: true, status: 200, reply, attempts: 1 });

  it('takes result and error per toolCallId; a missing one becomes an error', () => {
    const results = parseToolCallsReply(
      [...calls, { id: 'c3', name: 'x', arguments: '{}' }],
      ok({
        results: [
          { toolCallId: 'c2', error: 'fully booked' },
          { toolCallId: 'c1', result: { status: 'shipped' } },
        ],
      }),
    );
    expect(results).toEqual([
      { toolCallId: 'c1', name: 'lookup', result: '{"status":"shipped"}' },
      { toolCallId: 'c2', name: 'book', error: 'fully booked' },
      { toolCallId: 'c3', name: 'x', error: 'no result for tool call c3' },
    ]);
  });

  it('turns failures and bad replies into error results for every call', () => {
    const failed = parseToolCallsReply(calls, {
      ok: false,
      status: 500,
      reply: undefined,
      error: 'HTTP 500',
      attempts: 1,
    });
    expect(failed.map((r) => r.error)).toEqual([
      'the tool server failed: HTTP 500',
      'the tool server failed: HTTP 500',
    ]);
    expect(parseToolCallsReply(calls, ok(undefined))[0]!.error).toContain('not an object');
    expect(parseToolCallsReply(calls, ok({ error: 'down' }))[0]!.error).toBe('down');
    expect(parseToolCallsReply(calls, ok({ results: 'x' }))[1]!.error).toContain('without results');
  });
});

describe('MessageQueue', () => {
  it('sends in order, one at a time', async () => {
    const queue = new MessageQueue(10);
    const log: string[] = [];
    let active = 0;
    for (const name of ['a', 'b', 'c']) {
      queue.push({
        keep: false,
        send: async () => {
          active += 1;
          expect(active).toBe(1);
          await new Promise((resolve) => setTimeout(resolve, 5));
          log.push(name);
          active -= 1;
        },
      });
    }
    await queue.drained();
    expect(log).toEqual(['a', 'b', 'c']);
  });

  it('drops the oldest droppable message when full and counts it', async () => {
    const queue = new MessageQueue(3);
    const log: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    queue.push({ keep: false, send: () => gate.then(() => log.push('first')) });
    for (const [name, keep] of [
      ['status', true],
      ['speech-1', false],
      ['speech-2', false],
      ['speech-3', false],
      ['report', true],
    ] as const) {
      queue.push({ keep, send: () => Promise.resolve(log.push(name)) });
    }
    release();
    await queue.drained();
    expect(log).toEqual(['first', 'status', 'speech-3', 'report']);
    expect(queue.droppedCount).toBe(2);
  });
});
