/**
 * Transfers and DTMF through a CallSession with a fake telephony leg, a fake worker channel
 * and a fake transport: the control frames to the worker, the client frames, the stored status.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type {
  CallObserver,
  ToolCallRequest,
  TransferDestinationRequest,
} from '../../src/calls/call-observer.js';
import { CallSession } from '../../src/calls/call-session.js';
import type { PipelineCallParams } from '../../src/calls/pipeline-call-params.js';
import type { TelephonyLeg, TransferOutcome } from '../../src/calls/telephony-leg.js';
import type { Doc, Resource } from '../../src/store/resource-store.js';
import type { Store } from '../../src/store/store.js';
import type { CallTransport } from '../../src/transports/websocket/types.js';
import type { WorkerHost } from '../../src/workers/host.js';

class FakeChannel extends EventEmitter {
  readonly controls: Doc[] = [];
  readonly endRequests: string[] = [];
  isEnded = false;
  sendAudio(): void {}
  sendControl(message: Doc): void {
    this.controls.push(message);
  }
  end(reason: string): void {
    this.endRequests.push(reason);
    this.finish(reason);
  }
  finish(reason: string): void {
    if (!this.isEnded) {
      this.isEnded = true;
      this.emit('ended', reason);
    }
  }
  /** The pipeline finished saying `text`. */
  said(text: string): void {
    this.emit('event', 'transcript', {
      type: 'transcript',
      atMs: 1,
      role: 'assistant',
      transcriptType: 'final',
      transcript: text,
    });
  }
  toolCalls(toolCalls: ToolCallRequest[], turnId = 3): void {
    this.emit('event', 'tool-calls', { type: 'tool-calls', atMs: 1, turnId, toolCalls });
  }
  ofType(type: string): Doc[] {
    return this.controls.filter((c) => c.type === type);
  }
}

class FakeTransport implements CallTransport {
  readonly json: Doc[] = [];
  droppedAudioFrames = 0;
  maxBufferedBytes = 0;
  sendAudio(): boolean {
    return true;
  }
  sendJson(message: object): void {
    this.json.push(message as Doc);
  }
  close(): void {}
}

class FakeLeg implements TelephonyLeg {
  readonly transfers: Doc[] = [];
  readonly dtmf: string[] = [];
  outcome: TransferOutcome = { ok: true };
  transfer(destination: Doc): Promise<TransferOutcome> {
    this.transfers.push(destination);
    return Promise.resolve(this.outcome);
  }
  sendDtmf(digits: string): Promise<void> {
    this.dtmf.push(digits);
    return digits.includes('x')
      ? Promise.reject(Object.assign(new Error('"x" is not a DTMF key'), { code: 'invalid-dtmf' }))
      : Promise.resolve();
  }
}

const SALES = {
  type: 'number',
  number: '+15550100',
  message: 'Connecting you to sales, {{name}}.',
};

function setUp(
  options: {
    tools?: Doc[];
    leg?: boolean;
    started?: boolean;
    destinationReply?: (request: TransferDestinationRequest) => Doc;
    clientMessages?: string[];
  } = {},
) {
  const doc: Doc = { id: 'call-1', status: 'queued' };
  const stored: string[] = [];
  const calls = {
    update: async (_org: string, _id: string, mutate: (current: Resource) => Doc) => {
      await Promise.resolve();
      Object.assign(doc, mutate({ ...doc } as Resource));
      stored.push(String(doc.status));
      return { ...doc } as Resource;
    },
  };
  const channel = new FakeChannel();
  const transport = new FakeTransport();
  const serverToolCalls: ToolCallRequest[][] = [];
  const destinationRequests: TransferDestinationRequest[] = [];
  const observed: Doc[] = [];
  const observer: CallObserver = {
    onStatus: () => {},
    onPipelineEvent: (event) => observed.push(event),
    onAudio: () => {},
    onToolCalls: (toolCalls) => {
      serverToolCalls.push([...toolCalls]);
      return Promise.resolve(
        toolCalls.map((call) => ({ toolCallId: call.id, name: call.name, result: 'sunny' })),
      );
    },
    onEnded: () => Promise.resolve({}),
    ...(options.destinationReply !== undefined && {
      onTransferDestinationRequest: (request: TransferDestinationRequest) => {
        destinationRequests.push(request);
        return Promise.resolve(options.destinationReply!(request));
      },
    }),
  };
  const params: PipelineCallParams = {
    callId: 'call-1',
    orgId: 'org-1',
    assistant: {
      clientMessages: options.clientMessages ?? ['status-update'],
      model: { tools: options.tools ?? [] },
    },
    variableValues: { name: 'Ada' },
    credentials: {},
    providers: {} as PipelineCallParams['providers'],
    transportSampleRateHz: 8000,
    vad: 'energy',
  };
  const logged: string[] = [];
  const session = new CallSession({
    store: { resources: { calls } } as unknown as Store,
    orgId: 'org-1',
    callId: 'call-1',
    params,
    encoding: 'pcm_s16le',
    host: { startCall: () => channel } as unknown as WorkerHost,
    handlerName: 'fake',
    observer,
    connectTimeoutMs: 60_000,
    endTimeoutMs: 50,
    log: (_error, message) => logged.push(message),
  });
  const leg = new FakeLeg();
  if (options.leg !== false) {
    session.attachTelephony(leg);
  }
  session.onOpen(transport);
  if (options.started !== false) {
    channel.emit('started');
  }
  return {
    session,
    channel,
    transport,
    leg,
    doc,
    stored,
    serverToolCalls,
    destinationRequests,
    logged,
    observed,
  };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('the transfer control message', () => {
  it('is refused with transfer-not-supported on a call without a telephony leg', async () => {
    const t = setUp({ leg: false });
    await flush();
    const frame = JSON.stringify({ type: 'transfer', destination: SALES });
    t.session.onText(frame);
    expect(t.transport.json.at(-1)).toEqual({
      type: 'error',
      code: 'transfer-not-supported',
      message: expect.stringContaining('telephony leg') as string,
    });
    expect(t.channel.controls).toEqual([]);
  });

  it('says the message, goes forwarding, transfers after the speech, ends forwarded', async () => {
    const t = setUp();
    await flush();
    t.session.onText(JSON.stringify({ type: 'transfer', destination: SALES }));
    expect(t.channel.ofType('say')).toEqual([
      { type: 'say', content: SALES.message, interruptionsEnabled: false },
    ]);
    expect(t.transport.json).toContainEqual({
      type: 'status-update',
      status: 'forwarding',
      destination: SALES,
    });
    await expect.poll(() => t.doc.status).toBe('forwarding');
    expect(t.doc.destination).toEqual(SALES);
    await flush();
    expect(t.leg.transfers).toEqual([]); // still speaking
    t.channel.said('Something else.');
    await flush();
    expect(t.leg.transfers).toEqual([]);
    t.channel.said('Connecting you to sales, Ada.');
    await t.session.done;
    expect(t.leg.transfers).toEqual([SALES]);
    expect(t.channel.endRequests).toEqual(['assistant-forwarded-call']);
    expect(t.doc).toMatchObject({ status: 'ended', endedReason: 'assistant-forwarded-call' });
    expect(t.stored).toEqual(['ringing', 'in-progress', 'forwarding', 'ended']);
  });

  it('reports transfer-update with the destination to the client and the server side', async () => {
    const t = setUp({ clientMessages: ['status-update', 'transfer-update'] });
    await flush();
    t.channel.said('Hello.');
    t.session.onText(JSON.stringify({ type: 'transfer', destination: SALES }));
    expect(t.transport.json.filter((m) => m.type === 'transfer-update')).toEqual([
      { type: 'transfer-update', destination: SALES },
    ]);
    // The observer (the reporter: server messages) gets it as an event of the call.
    expect(t.observed.filter((e) => e.type === 'transfer-update')).toEqual([
      { type: 'transfer-update', atMs: 1, destination: SALES },
    ]);
    // Not for a destination that is not a number or SIP (refused before any transfer).
    const other = setUp({ clientMessages: ['transfer-update'] });
    await flush();
    other.session.onText(
      JSON.stringify({ type: 'transfer', destination: { type: 'assistant', assistantName: 'B' } }),
    );
    await flush();
    expect(other.transport.json.filter((m) => m.type === 'transfer-update')).toEqual([]);
  });

  it('is refused before the call is answered', () => {
    const t = setUp({ started: false });
    expect(t.session.control({ type: 'transfer', destination: SALES })).toMatchObject({
      ok: false,
      code: 'call-not-live',
    });
    expect(t.channel.controls).toEqual([]);
  });

  it('does not transfer when the caller hangs up during the message', async () => {
    const t = setUp();
    await flush();
    t.session.control({ type: 'transfer', destination: SALES });
    t.session.onClose(1000);
    await t.session.done;
    await flush();
    expect(t.leg.transfers).toEqual([]);
    expect(t.doc.endedReason).toBe('customer-ended-call');
  });

  it('uses the message content and refuses a second transfer meanwhile', async () => {
    const t = setUp();
    await flush();
    expect(
      t.session.control({ type: 'transfer', destination: SALES, content: 'Bye now.' }),
    ).toEqual({ ok: true });
    expect(t.session.control({ type: 'transfer', destination: SALES })).toMatchObject({
      ok: false,
      code: 'transfer-in-progress',
    });
    expect(t.channel.ofType('say').map((c) => c.content)).toEqual(['Bye now.']);
    t.channel.said('Bye now.');
    await t.session.done;
    expect(t.leg.transfers).toHaveLength(1);
  });

  it('failed: says the fallback message, then ends the call (endCallEnabled by default)', async () => {
    const t = setUp();
    t.leg.outcome = { ok: false, code: 'transfer-refused', message: '405 Method Not Allowed' };
    await flush();
    const destination = {
      type: 'sip',
      sipUri: 'sip:desk@pbx.example',
      transferPlan: { fallbackPlan: { message: 'Sorry, nobody is free.' } },
    };
    t.session.control({ type: 'transfer', destination });
    await expect.poll(() => t.channel.ofType('say').length).toBe(1);
    expect(t.channel.ofType('say')[0]!.content).toBe('Sorry, nobody is free.');
    expect(t.transport.json).toContainEqual({
      type: 'error',
      code: 'transfer-refused',
      message: '405 Method Not Allowed',
    });
    expect(t.transport.json.filter((m) => m.type === 'status-update').map((m) => m.status)).toEqual(
      ['ringing', 'in-progress', 'forwarding', 'in-progress'],
    );
    expect(t.channel.endRequests).toEqual([]);
    t.channel.said('Sorry, nobody is free.');
    await t.session.done;
    expect(t.doc.endedReason).toBe('assistant-ended-call-after-message-spoken');
  });

  it('failed with endCallEnabled false: the call carries on in progress', async () => {
    const t = setUp();
    t.leg.outcome = { ok: false, code: 'transfer-failed', message: 'The target answered 486' };
    await flush();
    t.session.control({
      type: 'transfer',
      destination: {
        ...SALES,
        message: undefined,
        transferPlan: { fallbackPlan: { endCallEnabled: false } },
      },
    });
    await expect.poll(() => t.doc.status).toBe('in-progress');
    await expect
      .poll(() => t.stored)
      .toEqual(['ringing', 'in-progress', 'forwarding', 'in-progress']);
    expect(t.channel.ofType('say')).toEqual([]);
    expect(t.channel.endRequests).toEqual([]);
    expect(t.session.state).toBe('in-progress');
    // A new transfer may start.
    expect(t.session.control({ type: 'transfer', destination: SALES })).toEqual({ ok: true });
  });
});

describe('the transferCall and dtmf tools', () => {
  const transferTool = {
    type: 'transferCall',
    destinations: [SALES, { type: 'sip', sipUri: 'sip:support@pbx.example' }],
  };

  it('transfers to the destination the arguments name; other tools go to the server, results in order', async () => {
    const t = setUp({ tools: [transferTool, { type: 'function', function: { name: 'weather' } }] });
    await flush();
    t.channel.toolCalls([
      { id: 'a', name: 'weather', arguments: '{}' },
      { id: 'b', name: 'transferCall', arguments: '{"destination":"sip:support@pbx.example"}' },
    ]);
    await expect.poll(() => t.channel.ofType('tool-results').length).toBe(1);
    expect(t.serverToolCalls).toEqual([[{ id: 'a', name: 'weather', arguments: '{}' }]]);
    expect(t.channel.ofType('tool-results')[0]).toEqual({
      type: 'tool-results',
      turnId: 3,
      results: [
        { toolCallId: 'a', name: 'weather', result: 'sunny' },
        {
          toolCallId: 'b',
          name: 'transferCall',
          result: 'Transferring the call to sip:support@pbx.example. Say nothing more.',
        },
      ],
    });
    await t.session.done;
    expect(t.leg.transfers).toEqual([transferTool.destinations[1]]);
    expect(t.doc.endedReason).toBe('assistant-forwarded-call');
  });

  it('a destination of another type is an error result and no transfer', async () => {
    const tool = {
      type: 'transferCall',
      destinations: [{ type: 'assistant', assistantName: 'Bo' }],
    };
    const t = setUp({ tools: [tool] });
    await flush();
    t.channel.toolCalls([{ id: 'b', name: 'transferCall', arguments: '{"destination":"Bo"}' }]);
    await expect.poll(() => t.channel.ofType('tool-results').length).toBe(1);
    const [result] = t.channel.ofType('tool-results')[0]!.results as Doc[];
    expect(result!.error).toContain('type assistant');
    expect(t.leg.transfers).toEqual([]);
    expect(t.doc.status).toBe('in-progress');
  });

  it('an unknown destination is an error result and no transfer', async () => {
    const t = setUp({ tools: [transferTool] });
    await flush();
    t.channel.toolCalls([{ id: 'b', name: 'transferCall', arguments: '{"destination":"+1999"}' }]);
    await expect.poll(() => t.channel.ofType('tool-results').length).toBe(1);
    const [result] = t.channel.ofType('tool-results')[0]!.results as Doc[];
    expect(result!.error).toContain('Unknown destination +1999');
    expect(t.leg.transfers).toEqual([]);
    expect(t.serverToolCalls).toEqual([]);
  });

  it('without destinations asks the server (transfer-destination-request)', async () => {
    const reply = { destination: { type: 'number', number: '+15550199' }, message: 'One moment.' };
    const t = setUp({ tools: [{ type: 'transferCall' }], destinationReply: () => reply });
    await flush();
    t.channel.toolCalls([{ id: 'c', name: 'transferCall', arguments: '{}' }]);
    await expect.poll(() => t.channel.ofType('say').length).toBe(1);
    expect(t.destinationRequests).toEqual([
      { toolCall: { id: 'c', name: 'transferCall', arguments: '{}' } },
    ]);
    expect(t.channel.ofType('say')[0]!.content).toBe('One moment.');
    t.channel.said('One moment.');
    await t.session.done;
    expect(t.leg.transfers).toEqual([reply.destination]);
  });

  it('a failed tool transfer tells the model and carries on when the fallback says so', async () => {
    const tool = {
      type: 'transferCall',
      function: { name: 'toSales' },
      destinations: [
        { ...SALES, message: undefined, transferPlan: { fallbackPlan: { endCallEnabled: false } } },
      ],
    };
    const t = setUp({ tools: [tool] });
    t.leg.outcome = { ok: false, code: 'transfer-timeout', message: 'No final transfer status' };
    await flush();
    t.channel.toolCalls([{ id: 'd', name: 'toSales', arguments: '' }]);
    await expect.poll(() => t.channel.ofType('add-message').length).toBe(1);
    expect(t.channel.ofType('add-message')[0]).toEqual({
      type: 'add-message',
      message: {
        role: 'system',
        content: 'The transfer to +15550100 failed (transfer-timeout): No final transfer status',
      },
      triggerResponseEnabled: true,
    });
    expect(t.channel.endRequests).toEqual([]);
    await expect.poll(() => t.doc.status).toBe('in-progress');
  });

  it('a transferCall on a call without a telephony leg gets an error result', async () => {
    const t = setUp({ tools: [transferTool], leg: false });
    await flush();
    t.channel.toolCalls([
      { id: 'e', name: 'transferCall', arguments: '{"destination":"+15550100"}' },
    ]);
    await expect.poll(() => t.channel.ofType('tool-results').length).toBe(1);
    const [result] = t.channel.ofType('tool-results')[0]!.results as Doc[];
    expect(result!.error).toContain('no telephony leg');
  });

  it('dtmf presses the keys of its arguments and reports errors as results', async () => {
    const t = setUp({ tools: [{ type: 'dtmf' }] });
    await flush();
    t.channel.toolCalls([
      { id: 'f', name: 'dtmf', arguments: '{"keys":"123#"}' },
      { id: 'g', name: 'dtmf', arguments: '{"keys":"1x"}' },
      { id: 'h', name: 'dtmf', arguments: '{}' },
    ]);
    await expect.poll(() => t.channel.ofType('tool-results').length).toBe(1);
    expect(t.leg.dtmf).toEqual(['123#', '1x']);
    expect(t.channel.ofType('tool-results')[0]!.results).toEqual([
      { toolCallId: 'f', name: 'dtmf', result: 'Pressed 123#.' },
      { toolCallId: 'g', name: 'dtmf', error: '"x" is not a DTMF key' },
      { toolCallId: 'h', name: 'dtmf', error: expect.stringContaining('keys') as string },
    ]);
    expect(t.serverToolCalls).toEqual([]);
  });
});
