import { once } from 'node:events';
import { createServer, STATUS_CODES, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';

/** One connection the fake accepted, as the tests see it. */
export interface FakeDeepgramConnection {
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** Every binary frame, in order. */
  audio: Buffer[];
  audioBytes: number;
  /** The `type` of every JSON text frame (KeepAlive, Finalize, CloseStream), in order. */
  controls: string[];
  /** Resolves with the close code once the socket is gone. */
  closed: Promise<number>;
  socket: WebSocket;
}

/** A Deepgram `Results` message. */
export function dgResults(
  transcript: string,
  options: { isFinal?: boolean; speechFinal?: boolean; start?: number; duration?: number } = {},
): Record<string, unknown> {
  return {
    type: 'Results',
    channel_index: [0, 1],
    start: options.start ?? 0,
    duration: options.duration ?? 1,
    is_final: options.isFinal ?? false,
    speech_final: options.speechFinal ?? false,
    channel: { alternatives: [{ transcript, confidence: 0.98, words: [] }] },
  };
}

/**
 * A local websocket server speaking Deepgram's live `/v1/listen` protocol. It checks the
 * `Authorization: Token` header, can refuse the upgrade with any status, sends the scripted
 * messages (with latency and jitter) once audio arrives, and records what the client sent.
 */
export class FakeDeepgramServer {
  apiKey = 'dg-test-key';
  /** Refuse every upgrade with this HTTP status. */
  refuseStatus: number | null = null;
  /** Hold every upgrade this long before answering. */
  upgradeDelayMs = 0;
  /** Messages sent after the first audio frame, each after `latencyMs` plus up to `jitterMs`. */
  script: Record<string, unknown>[] = [];
  latencyMs = 1;
  jitterMs = 0;
  /** Messages sent in answer to each Finalize. */
  finalizeReply: Record<string, unknown>[] = [];
  /** Drop the TCP connection (no close frame) after this many audio bytes. */
  dropAfterBytes: number | null = null;
  /** Do not answer CloseStream (the client must give up waiting). */
  ignoreCloseStream = false;
  readonly connections: FakeDeepgramConnection[] = [];
  readonly #server: Server = createServer((_req, res) => res.writeHead(404).end());
  readonly #wss = new WebSocketServer({ noServer: true });
  #url = '';

  constructor() {
    this.#server.on('upgrade', (request, socket: Duplex, head: Buffer) => {
      setTimeout(() => {
        const status =
          this.refuseStatus ??
          (request.headers.authorization === `Token ${this.apiKey}` ? null : 401);
        if (status !== null) {
          refuse(socket, status);
          return;
        }
        this.#wss.handleUpgrade(request, socket, head, (ws) => {
          const url = new URL(request.url ?? '/', 'http://fake');
          this.#accept(ws, url, request.headers);
        });
      }, this.upgradeDelayMs);
    });
  }

  /** e.g. `ws://127.0.0.1:1234` (no path: the client adds `/v1/listen`). */
  get url(): string {
    return this.#url;
  }

  async start(): Promise<void> {
    this.#server.listen(0, '127.0.0.1');
    await once(this.#server, 'listening');
    this.#url = `ws://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  reset(): void {
    this.refuseStatus = null;
    this.upgradeDelayMs = 0;
    this.script = [];
    this.latencyMs = 1;
    this.jitterMs = 0;
    this.finalizeReply = [];
    this.dropAfterBytes = null;
    this.ignoreCloseStream = false;
    this.connections.length = 0;
  }

  async close(): Promise<void> {
    for (const client of this.#wss.clients) {
      client.terminate();
    }
    this.#wss.close();
    this.#server.close();
    this.#server.closeAllConnections();
    await once(this.#server, 'close');
  }

  #accept(ws: WebSocket, url: URL, headers: IncomingHttpHeaders): void {
    const connection: FakeDeepgramConnection = {
      path: url.pathname,
      query: url.searchParams,
      headers,
      audio: [],
      audioBytes: 0,
      controls: [],
      closed: once(ws, 'close').then(([code]) => code as number),
      socket: ws,
    };
    this.connections.push(connection);
    const script = [...this.script];
    const dropAfter = this.dropAfterBytes;
    let sending = Promise.resolve();
    const send = (messages: Record<string, unknown>[]): void => {
      sending = sending.then(async () => {
        for (const message of messages) {
          await sleep(this.latencyMs + Math.random() * this.jitterMs);
          if (ws.readyState === ws.OPEN) {
            ws.send(JSON.stringify(message));
          }
        }
      });
    };
    ws.on('message', (data: Buffer, isBinary) => {
      if (isBinary) {
        connection.audio.push(Buffer.from(data));
        connection.audioBytes += data.length;
        if (script.length > 0) {
          send(script.splice(0));
        }
        if (dropAfter !== null && connection.audioBytes >= dropAfter) {
          ws.terminate();
        }
        return;
      }
      const message = JSON.parse(data.toString()) as { type: string };
      connection.controls.push(message.type);
      if (message.type === 'Finalize') {
        send(this.finalizeReply);
      } else if (message.type === 'CloseStream' && !this.ignoreCloseStream) {
        // Whatever is still scripted goes out first, then metadata, then the close.
        sending = sending.then(() => {
          ws.send(JSON.stringify({ type: 'Metadata', request_id: 'fake', duration: 1 }));
          ws.close(1000);
        });
      }
    });
  }
}

function refuse(socket: Duplex, status: number): void {
  const body = JSON.stringify({ err_code: 'FAKE', err_msg: `refused with ${status}` });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
      'Content-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits until `condition` holds (polling); the test timeout bounds it. */
export async function until(condition: () => boolean): Promise<void> {
  while (!condition()) {
    await sleep(2);
  }
}
