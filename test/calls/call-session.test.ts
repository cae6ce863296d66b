/**
 * CallSession against fakes (store, worker channel, transport): the lifecycle's ordering rules
 * without threads or sockets.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { ObservedEvent, ToolCallRequest } from '../../src/calls/call-observer.js';
import { CallSession, ENDED_REASON_NEVER_CONNECTED } from '../../src/calls/call-session.js';
import type { PipelineCallParams } from '../../src/calls/pipeline-call-params.js';
import type { Doc, Resource } from '../../src/store/resource-store.js';
import type { Store } from '../../src/store/store.js';
import type { CallTransport } from '../../src/transports/websocket/types.js';
import type { WorkerHost } from '../../src/workers/host.js';

class FakeChannel extends EventEmitter {
  readonly sent: unknown[] = [];
  readonly controls: unknown[] = [];
  endRequests: string[] = [];
  isEnded = false;
  sendAudio(samples: Int16Array): void {
    this.sent.push(samples.length);
  }
  sendControl(message: unknown): void {
    this.controls.push(message);
  }
  end(reason: string): void {
    this.endRequests.push(reason);
  }
  finish(reason: string): void {
    if (!this.isEnded) {
      this.isEnded = true;
      this.emit('ended', reason);
    }
  }
}

class FakeTransport implements CallTransport {
  readonly json: any[] = [];
  readonly audio: number[] = [];
  closed: [number, string] | undefined;
  droppedAudioFrames = 0;
  maxBufferedBytes = 0;
  sendAudio(samples: Int16Array): boolean {
    this.audio.push(samples.length);
    return true;
  }
  sendJson(message: object): void {
    this.json.push(message);
  }
  close(code: number, reason: string): void {
    this.closed = [code, reason];
  }
}

function fakeStore(): { store: Store; doc: Doc; failNext: { value: boolean } } {
  const doc: Doc = { id: 'call-1', status: 'queued' };
  const failNext = { value: false };
  const calls = {
    update: async (_org: string, _id: string, mutate: (current: Resource) => Doc) => {
      await Promise.resolve();
      if (failNext.value) {
        failNext.value = false;
        throw new Error('database down');
      }
      Object.assign(doc, mutate({ ...doc } as Resource));
      return { ...doc } as Resource;
    },
  };
  return { store: { resources: { calls } } as unknown as Store, doc, failNext };
}

const params: PipelineCallParams = {
  callId: 'call-1',
  orgId: 'org-1',
  assistant: { clientMessages: ['status-update', 'transcript'] },
  variableValues: {},
  credentials: {},
  providers: {} as PipelineCallParams['providers'],
  transportSampleRateHz: 16000,
  vad: 'energy',
};

function setUp(options: { observerThrows?: boolean; connectTimeoutMs?: number } = {}) {
  const { store, doc, failNext } = fakeStore();
  const channel = new FakeChannel();
  const statuses: string[] = [];
  const events: ObservedEvent[] = [];
  const logged: string[] = [];
  const host = { startCall: () => channel } as unknown as WorkerHost;
  const session = new CallSession({
    store,
    orgId: 'org-1',
    callId: 'call-1',
    params,
    encoding: 'pcm_s16le',
    host,
    handlerName: 'fake',
    observer: {
      onStatus: (call) => {
        statuses.push(String(call.status));
        if (options.observerThrows === true) {
          throw new Error('observer bug');
        }
      },
      onPipelineEvent: (event) => events.push(event),
      onAudio: () => {},
      onToolCalls: (calls: readonly ToolCallRequest[]) =>
        Promise.reject(new Error(`no server for ${calls.length}`)),
      onEnded: () => Promise.resolve({ cost: 0.5 }),
    },
    connectTimeoutMs: options.connectTimeoutMs ?? 60_000,
    endTimeoutMs: 50,
    log: (_error, message) => logged.push(message),
  });
  return { session, channel, doc, statuses, events, logged, failNext };
}

describe('CallSession', () => {
  it('keeps the hang-up reason when the worker reports another one meanwhile', async () => {
    const { session, channel, doc, statuses } = setUp();
    const transport = new FakeTransport();
    session.onOpen(transport);
    channel.emit('started', 1);
    session.onClose(1005);
    expect(channel.endRequests).toEqual(['customer-ended-call']);
    // The worker had already failed on its own before it saw the end request.
    channel.finish('pipeline-error-deepgram-transcriber-failed');
    await session.done;
    expect(doc).toMatchObject({ status: 'ended', endedReason: 'customer-ended-call', cost: 0.5 });
    expect(statuses).toEqual(['ringing', 'in-progress', 'ended']);
  });

  it('ends by itself when the worker never confirms, and survives a throwing observer', async () => {
    const { session, channel, doc, logged } = setUp({ observerThrows: true });
    session.onOpen(new FakeTransport());
    session.control({ type: 'end-call' });
    expect(channel.controls).toEqual([{ type: 'end-call' }]);
    await session.done;
    expect(doc.endedReason).toBe('assistant-ended-call');
    expect(logged).toContain('call observer threw');
  });

  it('answers tool calls with error results when the observer fails, and keeps going after a store error', async () => {
    const { session, channel, doc, failNext, logged } = setUp();
    const transport = new FakeTransport();
    failNext.value = true; // the ringing write fails
    session.onOpen(transport);
    channel.emit('event', 'tool-calls', {
      type: 'tool-calls',
      atMs: 5,
      turnId: 3,
      toolCalls: [{ id: 't1', name: 'lookup', arguments: '{}' }],
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(channel.controls).toEqual([
      {
        type: 'tool-results',
        turnId: 3,
        results: [{ toolCallId: 't1', name: 'lookup', error: 'The tool call failed' }],
      },
    ]);
    expect([...logged].sort()).toEqual([
      'could not store call status ringing',
      'tool calls failed',
    ]);
    channel.emit('event', 'transcript', {
      type: 'transcript',
      atMs: 9,
      role: 'user',
      transcriptType: 'final',
      transcript: 'hi',
    });
    channel.emit('event', 'model-output', {
      type: 'model-output',
      atMs: 9,
      output: 'x',
      turnId: 1,
    });
    expect(transport.json).toEqual([
      { type: 'status-update', status: 'ringing' },
      { type: 'transcript', role: 'user', transcriptType: 'final', transcript: 'hi' },
    ]);
    channel.emit('event', 'control-rejected', {
      type: 'control-rejected',
      controlType: 'transfer',
      message: 'control message "transfer" is not supported',
    });
    expect(transport.json.at(-1)).toEqual({
      type: 'error',
      code: 'control-rejected',
      message: 'control message "transfer" is not supported',
    });
    channel.finish('silence-timed-out');
    await session.done;
    expect(doc).toMatchObject({ status: 'ended', endedReason: 'silence-timed-out' });
    expect(transport.closed).toEqual([1000, 'silence-timed-out']);
  });

  it('refuses control before the socket connects and ends when it never does', async () => {
    const { session, doc } = setUp({ connectTimeoutMs: 30 });
    expect(session.control({ type: 'say', content: 'x' })).toMatchObject({
      ok: false,
      code: 'call-not-live',
    });
    await session.done;
    expect(doc).toMatchObject({ status: 'ended', endedReason: ENDED_REASON_NEVER_CONNECTED });
    expect(doc.startedAt).toBe(doc.endedAt);
    expect(session.control({ type: 'say', content: 'x' })).toMatchObject({ code: 'call-ended' });
  });
});
