import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HarnessError } from '../../bench/harness/caller-transport.js';
import { WebsocketCallerTransport } from '../../bench/harness/websocket-transport.js';
import { startFakeParla, type FakeParla } from './fake-parla-websocket.js';

const KEY = 'parla_test_key';
let parla: FakeParla;

beforeAll(async () => {
  parla = await startFakeParla(KEY);
});
afterAll(async () => {
  await parla.close();
});

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  expect(check()).toBe(true);
}

function collector() {
  const audio: number[] = [];
  const messages: Record<string, unknown>[] = [];
  const closes: string[] = [];
  return {
    audio,
    messages,
    closes,
    handlers: {
      onAudio: (samples: Int16Array) => audio.push(...samples),
      onMessage: (message: Record<string, unknown>) => messages.push(message),
      onClose: (reason: string) => closes.push(reason),
    },
  };
}

describe('WebsocketCallerTransport', () => {
  it('creates the call, streams PCM16LE both ways, passes JSON messages and hangs up', async () => {
    const transport = new WebsocketCallerTransport({
      baseUrl: `${parla.baseUrl}/`,
      apiKey: KEY,
      assistantId: 'asst-1',
      sampleRateHz: 8000,
    });
    const got = collector();
    const call = await transport.connect(got.handlers);
    expect(call).toEqual({ callId: expect.stringMatching(/^call-/), sampleRateHz: 8000 });
    const request = parla.requests.at(-1)!;
    expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request.body).toEqual({
      assistantId: 'asst-1',
      transport: {
        provider: 'parla.websocket',
        audioFormat: { format: 'pcm_s16le', container: 'raw', sampleRate: 8000 },
      },
    });
    const frame = Int16Array.from([1, -2, 300, -32768, 32767]);
    transport.sendAudio(frame.subarray(1, 4));
    transport.sendMessage({ type: 'say', content: 'hi' });
    const record = parla.received.at(-1)!;
    await until(() => record.bytes.length === 1 && record.texts.length === 1);
    expect([...new Int16Array(new Uint8Array(record.bytes[0]!).buffer)]).toEqual([-2, 300, -32768]);
    expect(JSON.parse(record.texts[0]!)).toEqual({ type: 'say', content: 'hi' });
    // Client frames are masked on the wire; the shared frame itself must stay as it was.
    expect([...frame]).toEqual([1, -2, 300, -32768, 32767]);

    // Server → caller: samples split at an odd byte, and a client message.
    const bytes = Buffer.from(Int16Array.from([5, -6, 7000, -8000]).buffer);
    const socket = parla.sockets.at(-1)!;
    socket.send(bytes.subarray(0, 3));
    socket.send(bytes.subarray(3));
    socket.send(JSON.stringify({ type: 'speech-update', role: 'assistant', status: 'started' }));
    socket.send('not json');
    await until(() => got.audio.length === 4 && got.messages.length === 2);
    expect(got.audio).toEqual([5, -6, 7000, -8000]);
    expect(got.messages).toEqual([
      { type: 'speech-update', role: 'assistant', status: 'started' },
      { type: '(invalid json)' },
    ]);

    await transport.close();
    await until(() => record.closed);
    expect(got.closes).toEqual([]);
  });

  it('reports the server closing the call', async () => {
    const transport = new WebsocketCallerTransport({
      baseUrl: parla.baseUrl,
      apiKey: KEY,
      assistantId: 'a',
    });
    const got = collector();
    await transport.connect(got.handlers);
    parla.sockets.at(-1)!.close(4000, 'assistant-ended-call');
    await until(() => got.closes.length === 1);
    expect(got.closes[0]).toBe('socket closed (4000 assistant-ended-call)');
    await transport.close();
  });

  it('fails with stable codes on a refused key or a call without a socket URL', async () => {
    const refused = new WebsocketCallerTransport({
      baseUrl: parla.baseUrl,
      apiKey: 'wrong',
      assistantId: 'a',
    });
    await expect(refused.connect(collector().handlers)).rejects.toMatchObject({
      code: 'ERR_BENCH_CONNECT',
      message: expect.stringContaining('401'),
    });
    parla.nextCallAnswer = {
      status: 201,
      body: { id: 'c', transport: { provider: 'parla.websocket' } },
    };
    const noUrl = new WebsocketCallerTransport({
      baseUrl: parla.baseUrl,
      apiKey: KEY,
      assistantId: 'a',
    });
    const error = await noUrl.connect(collector().handlers).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HarnessError);
    expect((error as HarnessError).code).toBe('ERR_BENCH_PROTOCOL');
    expect(() => new WebsocketCallerTransport({ baseUrl: 'x', apiKey: KEY })).toThrow(
      /assistantId/,
    );
  });
});
