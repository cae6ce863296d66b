import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { RealClock } from '../../bench/harness/clock.js';
import { FakeServerTransport, type FakeServerOptions } from '../../bench/harness/fake-transport.js';

/**
 * A local stand-in for Parla's websocket call API, enough to check the harness's adapter speaks
 * the protocol: POST /call (Bearer key) answers a call with transport.websocketCallUrl; the socket
 * at that URL (token checked once) records what the caller sends and lets the test push frames.
 * With `brainOptions`, each call is answered by the harness's fake server logic on a real clock
 * (reply tones after the caller's speech), so the runner can be driven over a real socket.
 */
export interface FakeParla {
  baseUrl: string;
  requests: { headers: IncomingMessage['headers']; body: any }[];
  /** Binary bytes and text messages the caller sent, per socket. */
  received: { bytes: Buffer[]; texts: string[]; closed: boolean }[];
  sockets: WebSocket[];
  /** Answer POST /call with this instead (status, body). */
  nextCallAnswer: { status: number; body: unknown } | null;
  /** GET /call/:id answers the call as ended, with these as artifact.performanceMetrics.turnLatencies. */
  turnLatencies: Record<string, number>[];
  /** This many GET /call/:id answer the call as ended without its artifact yet (as Parla does
   * between storing the status and the artifact). */
  getsBeforeArtifact: number;
  close(): Promise<void>;
}

export async function startFakeParla(
  apiKey: string,
  brainOptions?: Omit<FakeServerOptions, 'clock'>,
): Promise<FakeParla> {
  const wss = new WebSocketServer({ noServer: true });
  const tokens = new Set<string>();
  let nextId = 1;
  const fake: FakeParla = {
    baseUrl: '',
    requests: [],
    received: [],
    sockets: [],
    nextCallAnswer: null,
    turnLatencies: [],
    getsBeforeArtifact: 0,
    close: () =>
      new Promise((resolve) => {
        for (const socket of fake.sockets) {
          socket.terminate();
        }
        wss.close();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString()));
    request.on('end', () => {
      const body = text === '' ? null : JSON.parse(text);
      fake.requests.push({ headers: request.headers, body });
      const answer = (status: number, value: unknown): void => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(value));
      };
      const getCall = /^\/call\/(call-\d+)$/.exec(request.url ?? '');
      if (request.headers.authorization !== `Bearer ${apiKey}`) {
        answer(401, { statusCode: 401, error: 'Unauthorized', message: 'Invalid API key' });
      } else if (request.method === 'GET' && getCall !== null && fake.getsBeforeArtifact > 0) {
        fake.getsBeforeArtifact -= 1;
        answer(200, { id: getCall[1], status: 'ended' });
      } else if (request.method === 'GET' && getCall !== null) {
        answer(200, {
          id: getCall[1],
          status: 'ended',
          artifact: { performanceMetrics: { turnLatencies: fake.turnLatencies } },
        });
      } else if (request.method !== 'POST' || request.url !== '/call') {
        answer(404, { message: 'not found' });
      } else if (fake.nextCallAnswer !== null) {
        answer(fake.nextCallAnswer.status, fake.nextCallAnswer.body);
        fake.nextCallAnswer = null;
      } else {
        const id = `call-${nextId++}`;
        const token = `tok${Math.random().toString(36).slice(2)}`;
        tokens.add(token);
        const { port } = server.address() as AddressInfo;
        answer(201, {
          id,
          type: 'parla.websocketCall',
          status: 'queued',
          transport: {
            ...body.transport,
            websocketCallUrl: `ws://127.0.0.1:${port}/${id}/transport?token=${token}`,
          },
        });
      }
    });
  });
  server.on('upgrade', (request, socket, head) => {
    const token = new URL(request.url ?? '/', 'http://x').searchParams.get('token') ?? '';
    if (!tokens.delete(token)) {
      socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      const record = { bytes: [] as Buffer[], texts: [] as string[], closed: false };
      fake.received.push(record);
      fake.sockets.push(ws);
      const brain =
        brainOptions === undefined
          ? null
          : new FakeServerTransport(
              { ...brainOptions, clock: new RealClock() },
              fake.sockets.length,
            );
      void brain?.connect({
        onAudio: (samples) =>
          ws.send(Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength)),
        onMessage: (message) => ws.send(JSON.stringify(message)),
        onClose: () => ws.close(),
      });
      ws.on('message', (data: Buffer, isBinary: boolean) => {
        if (isBinary) {
          record.bytes.push(Buffer.from(data));
          brain?.sendAudio(new Int16Array(new Uint8Array(data).buffer));
        } else {
          record.texts.push(data.toString());
        }
      });
      ws.on('close', () => {
        void brain?.close();
        record.closed = true;
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}
