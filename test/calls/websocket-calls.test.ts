import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ENDED_REASON_NEVER_CONNECTED } from '../../src/calls/call-session.js';
import { decodeMuLaw, encodeMuLaw } from '../../src/media/codecs/g711.js';
import { ENDED_REASON_WORKER_DIED } from '../../src/workers/protocol.js';
import {
  connect,
  refusedStatus,
  useWsHarness,
  waitFor,
  type TestClient,
} from './websocket-call-harness.js';

const h = useWsHarness({ connectTimeoutMs: 3000 });

const echoAssistant = (echoMode = 'echo', extra: object = {}) => ({
  name: 'echo',
  metadata: { echoMode },
  ...extra,
});

function transport(format: 'pcm_s16le' | 'mulaw', sampleRate: number) {
  return { provider: 'parla.websocket', audioFormat: { format, container: 'raw', sampleRate } };
}

/** A 300 Hz sine, `seconds` long, as PCM16. */
function sine(sampleRateHz: number, seconds: number): Int16Array {
  const samples = new Int16Array(Math.round(sampleRateHz * seconds));
  for (let i = 0; i < samples.length; i++) {
    samples[i] = Math.round(Math.sin((2 * Math.PI * 300 * i) / sampleRateHz) * 12000);
  }
  return samples;
}

/** Sends `bytes` in chunks of `chunkBytes` (odd on purpose). */
function sendChunks(client: TestClient, bytes: Uint8Array, chunkBytes: number): void {
  for (let offset = 0; offset < bytes.length; offset += chunkBytes) {
    client.ws.send(bytes.subarray(offset, Math.min(bytes.length, offset + chunkBytes)), {
      binary: true,
    });
  }
}

const totalBytes = (client: TestClient): number => client.binary.reduce((n, b) => n + b.length, 0);

async function endedCall(callId: string, timeoutMs = 10_000) {
  let call: any = null;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    call = await h.stored(callId);
    if (call?.status === 'ended' && call.artifact !== undefined) {
      return call;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`call ${callId} did not end: ${JSON.stringify(call)}`);
}

describe('websocket calls', () => {
  it('creates a queued call with tokened URLs shown once, never stored', async () => {
    const call = await h.createCall({
      assistant: echoAssistant(),
      transport: { provider: 'vapi.websocket' },
    });
    expect(call).toMatchObject({
      type: 'vapi.websocketCall',
      status: 'queued',
      transport: {
        provider: 'vapi.websocket',
        audioFormat: { format: 'pcm_s16le', sampleRate: 16000 },
      },
    });
    const url = new URL(call.transport.websocketCallUrl);
    expect(url.origin + url.pathname).toBe(`${h.wsBase}/call/${call.id}/transport`);
    const token = url.searchParams.get('token') ?? '';
    expect(token.length).toBeGreaterThanOrEqual(40);
    expect(call.monitor.listenUrl).toMatch(new RegExp(`/call/${call.id}/listen\\?token=`));
    expect(call.monitor.controlUrl).toMatch(
      new RegExp(`^http://parla.test/call/${call.id}/control\\?token=`),
    );
    const stored = await h.stored(call.id);
    expect(stored).toMatchObject({ status: 'queued' });
    expect(JSON.stringify(stored)).not.toContain(token);
    expect(stored).not.toHaveProperty('monitor');
  });

  it('refuses unknown calls, wrong tokens and a second socket with the same token', async () => {
    const call = await h.createCall({
      assistant: echoAssistant(),
      transport: transport('pcm_s16le', 16000),
    });
    const url = new URL(call.transport.websocketCallUrl);
    const [unknown, body] = await refusedStatus(`${h.wsBase}/call/nope/transport?token=x`);
    expect([unknown, body.message]).toEqual([404, 'No live call nope on this server']);
    expect((await refusedStatus(`${h.wsBase}/call/${call.id}/transport?token=wrong`))[0]).toBe(401);
    expect((await refusedStatus(`${h.wsBase}/call/${call.id}/transport`))[0]).toBe(401);
    const client = await connect(url.href);
    const [reused, reusedBody] = await refusedStatus(url.href);
    expect(reused).toBe(409);
    expect(reusedBody.message).toContain('works once');
    expect((await refusedStatus(`${h.wsBase}/elsewhere`))[0]).toBe(404);
    client.ws.close();

    // A client offering subprotocols gets one of them back.
    const other = await h.createCall({
      assistant: echoAssistant(),
      transport: transport('pcm_s16le', 16000),
    });
    const offered = new WebSocket(other.transport.websocketCallUrl, ['audio.v1', 'audio.v2']);
    await new Promise((resolve, reject) => {
      offered.once('open', resolve);
      offered.once('error', reject);
    });
    expect(offered.protocol).toBe('audio.v1');
    offered.close();
  });

  it.each([
    ['pcm_s16le', 16000, 333],
    ['mulaw', 8000, 77],
    ['pcm_s16le', 44100, 1001],
  ] as const)(
    'round-trips %s at %i Hz in %i-byte chunks, in 20 ms frames',
    async (format, rate, chunk) => {
      const call = await h.createCall({
        assistant: echoAssistant(),
        transport: transport(format, rate),
      });
      const client = await connect(call.transport.websocketCallUrl);
      const signal = sine(rate, 0.5);
      let sent: Uint8Array;
      if (format === 'mulaw') {
        sent = new Uint8Array(signal.length);
        encodeMuLaw(signal, sent);
      } else {
        sent = new Uint8Array(signal.buffer);
      }
      sendChunks(client, sent, chunk);
      await waitFor(() => totalBytes(client) >= sent.length, 10_000, 'the echo');
      const received = new Uint8Array(Buffer.concat(client.binary));
      expect(received.length).toBe(sent.length);
      if (format === 'mulaw') {
        const a = new Int16Array(sent.length);
        const b = new Int16Array(sent.length);
        decodeMuLaw(sent, a);
        decodeMuLaw(received, b);
        expect(b).toEqual(a);
      } else {
        expect(Buffer.from(received).equals(Buffer.from(sent))).toBe(true);
      }
      const frameBytes = Math.round((rate * 20) / 1000) * (format === 'mulaw' ? 1 : 2);
      expect(client.binary.slice(0, -1).every((frame) => frame.length === frameBytes)).toBe(true);
      const observer = h.observers.get(call.id)!;
      expect(observer.audio.user).toBe(signal.length);
      expect(observer.audio.assistant).toBe(signal.length);
      // The handler's first event reached the client as a bare client message.
      expect(client.texts).toContainEqual({
        type: 'speech-update',
        role: 'assistant',
        status: 'started',
        turn: 0,
      });
      client.ws.close();
      await endedCall(call.id);
    },
  );

  it('persists queued → ringing → in-progress → ended; a closed socket is customer-ended-call', async () => {
    const call = await h.createCall({
      assistant: echoAssistant(),
      transport: transport('pcm_s16le', 16000),
    });
    const client = await connect(call.transport.websocketCallUrl);
    const observer = h.observers.get(call.id)!;
    await waitFor(() => observer.statuses.length >= 2, 10_000, 'in-progress');
    expect(client.texts.filter((m) => m.type === 'status-update')).toEqual([
      { type: 'status-update', status: 'ringing' },
      { type: 'status-update', status: 'in-progress' },
    ]);
    client.ws.close();
    const ended = await endedCall(call.id);
    expect(observer.statuses.map((s) => s.status)).toEqual(['ringing', 'in-progress', 'ended']);
    expect(ended).toMatchObject({
      status: 'ended',
      endedReason: 'customer-ended-call',
      artifact: { transcript: 'recorded by the test observer' },
    });
    expect(Date.parse(ended.startedAt)).toBeLessThanOrEqual(Date.parse(ended.endedAt));
    expect(observer.ended).toMatchObject({ status: 'ended', endedReason: 'customer-ended-call' });
  });

  it('forwards control messages, answers bad ones with an error frame and keeps the call', async () => {
    const call = await h.createCall({
      assistant: echoAssistant(),
      transport: transport('pcm_s16le', 16000),
    });
    const client = await connect(call.transport.websocketCallUrl);
    const observer = h.observers.get(call.id)!;
    const say = { type: 'say', content: 'hello there', endCallAfterSpoken: false };
    client.ws.send(JSON.stringify(say));
    client.ws.send(JSON.stringify({ type: 'control', control: 'mute-customer' }));
    await waitFor(() => observer.events.filter((e) => e.type === 'control-received').length >= 2);
    expect(
      observer.events.filter((e) => e.type === 'control-received').map((e) => e.message),
    ).toEqual([say, { type: 'control', control: 'mute-customer' }]);

    client.ws.send('{not json');
    client.ws.send(JSON.stringify({ type: 'say' }));
    client.ws.send(JSON.stringify({ type: 'dance' }));
    client.ws.send(JSON.stringify({ type: 'control', control: 'explode' }));
    client.ws.send(JSON.stringify({ type: 'say', content: 'x'.repeat(70 * 1024) }));
    await waitFor(() => client.texts.filter((m) => m.type === 'error').length >= 5);
    expect(client.texts.filter((m) => m.type === 'error').map((m) => m.code)).toEqual([
      'invalid-json',
      'invalid-message',
      'unknown-message-type',
      'invalid-message',
      'message-too-large',
    ]);

    // Barge-in: the client is told to clear its audio; tool calls go to the observer and back.
    client.ws.send(JSON.stringify({ type: 'say', content: 'interrupt' }));
    await waitFor(() => client.texts.some((m) => m.type === 'clear'));
    expect(client.texts).toContainEqual({ type: 'user-interrupted', turnId: 1 });
    client.ws.send(JSON.stringify({ type: 'say', content: 'tools' }));
    await waitFor(() => observer.events.some((e) => e.type === 'tool-results-received'));
    expect(observer.toolCalls).toEqual([
      [{ id: 'call-1', name: 'lookup', arguments: '{"order":42}' }],
    ]);
    expect(observer.events.find((e) => e.type === 'tool-results-received')).toMatchObject({
      turnId: 2,
      results: [{ toolCallId: 'call-1', result: 'ok lookup' }],
    });
    const toolMessage = client.texts.find((m) => m.type === 'tool-calls');
    expect(toolMessage.toolCallList[0]).toMatchObject({
      id: 'call-1',
      function: { name: 'lookup', arguments: '{"order":42}' },
      arguments: { order: 42 },
    });

    // Still alive: audio echoes after all that.
    client.ws.send(new Uint8Array(640).fill(7), { binary: true });
    await waitFor(() => totalBytes(client) >= 640);
    expect((await h.stored(call.id))?.status).toBe('in-progress');
    client.ws.send(JSON.stringify({ type: 'end-call' }));
    expect((await endedCall(call.id)).endedReason).toBe('assistant-ended-call');
    await waitFor(() => client.closed !== undefined);
    expect(client.closed).toEqual({ code: 1000, reason: 'assistant-ended-call' });
    expect(client.texts.at(-1)).toEqual({
      type: 'status-update',
      status: 'ended',
      endedReason: 'assistant-ended-call',
    });
  });

  it('drops caller audio arriving far faster than real time, and says so once', async () => {
    const call = await h.createCall({
      assistant: echoAssistant('tone'),
      transport: transport('mulaw', 8000),
    });
    const client = await connect(call.transport.websocketCallUrl);
    const chunk = new Uint8Array(200_000).fill(0x55); // 25 s of 8 kHz mu-law each
    for (let i = 0; i < 4; i++) {
      client.ws.send(chunk, { binary: true });
    }
    await waitFor(() => client.texts.some((m) => m.type === 'error'));
    expect(client.texts.filter((m) => m.type === 'error').map((m) => m.code)).toEqual([
      'audio-too-fast',
    ]);
    const observer = h.observers.get(call.id)!;
    await waitFor(() => observer.audio.user >= 400_000);
    expect(observer.audio.user).toBeLessThan(800_000);
    client.ws.close();
    await endedCall(call.id);
  });

  it('ends a call whose socket never connects', async () => {
    const call = await h.createCall({
      assistant: echoAssistant(),
      transport: transport('mulaw', 8000),
    });
    const ended = await endedCall(call.id, 10_000);
    expect(ended.endedReason).toBe(ENDED_REASON_NEVER_CONNECTED);
    expect((await refusedStatus(call.transport.websocketCallUrl))[0]).toBe(404);
  });

  it('ends the call with worker-died when its worker thread dies', async () => {
    const call = await h.createCall({
      assistant: echoAssistant('crash'),
      transport: transport('pcm_s16le', 16000),
    });
    const client = await connect(call.transport.websocketCallUrl);
    const ended = await endedCall(call.id, 15_000);
    expect(ended.endedReason).toBe(ENDED_REASON_WORKER_DIED);
    await waitFor(() => client.closed !== undefined);
  });

  it('ends a call on hangup, and a deleted call', async () => {
    const call = await h.createCall({
      assistant: echoAssistant(),
      transport: transport('pcm_s16le', 16000),
    });
    const client = await connect(call.transport.websocketCallUrl);
    client.ws.send(JSON.stringify({ type: 'hangup' }));
    expect((await endedCall(call.id)).endedReason).toBe('customer-ended-call');

    const other = await h.createCall({
      assistant: echoAssistant(),
      transport: transport('pcm_s16le', 16000),
    });
    const otherClient = await connect(other.transport.websocketCallUrl);
    const response = await h.app.inject({
      method: 'DELETE',
      url: `/call/${other.id}`,
      headers: { authorization: `Bearer ${h.key}` },
    });
    expect(response.statusCode).toBe(200);
    await waitFor(() => otherClient.closed !== undefined);
    expect(otherClient.closed?.reason).toBe('manually-canceled');
  });
});
