import { once } from 'node:events';
import { createServer, STATUS_CODES, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';

export interface FakeCustomConnection {
  headers: IncomingHttpHeaders;
  /** The first text frame, parsed. */
  start: Record<string, unknown> | null;
  audioBytes: number;
  /** True when a binary frame arrived before the start frame. */
  audioBeforeStart: boolean;
  closed: Promise<number>;
}

/**
 * A custom-transcriber server: reads the `start` frame, then PCM; after every `bytesPerReply`
 * bytes of audio it answers with the next of `transcripts` (plus an `assistant`-channel message
 * the client must ignore).
 */
export class FakeCustomTranscriberServer {
  transcripts: string[] = [];
  bytesPerReply = 320;
  refuseStatus: number | null = null;
  readonly connections: FakeCustomConnection[] = [];
  readonly #server: Server = createServer((_req, res) => res.writeHead(404).end());
  readonly #wss = new WebSocketServer({ noServer: true });
  #url = '';

  constructor() {
    this.#server.on('upgrade', (request, socket: Duplex, head: Buffer) => {
      if (this.refuseStatus !== null) {
        const status = this.refuseStatus;
        socket.end(
          `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Length: 0\r\n` +
            'Connection: close\r\n\r\n',
        );
        return;
      }
      this.#wss.handleUpgrade(request, socket, head, (ws) => this.#accept(ws, request.headers));
    });
  }

  /** e.g. `ws://127.0.0.1:1234/transcribe`. */
  get url(): string {
    return this.#url;
  }

  async start(): Promise<void> {
    this.#server.listen(0, '127.0.0.1');
    await once(this.#server, 'listening');
    this.#url = `ws://127.0.0.1:${(this.#server.address() as AddressInfo).port}/transcribe`;
  }

  reset(): void {
    this.transcripts = [];
    this.bytesPerReply = 320;
    this.refuseStatus = null;
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

  #accept(ws: WebSocket, headers: IncomingHttpHeaders): void {
    const connection: FakeCustomConnection = {
      headers,
      start: null,
      audioBytes: 0,
      audioBeforeStart: false,
      closed: once(ws, 'close').then(([code]) => code as number),
    };
    this.connections.push(connection);
    const transcripts = [...this.transcripts];
    let nextReplyAt = this.bytesPerReply;
    ws.on('message', (data: Buffer, isBinary) => {
      if (!isBinary) {
        connection.start ??= JSON.parse(data.toString()) as Record<string, unknown>;
        return;
      }
      connection.audioBeforeStart ||= connection.start === null;
      connection.audioBytes += data.length;
      while (connection.audioBytes >= nextReplyAt && transcripts.length > 0) {
        nextReplyAt += this.bytesPerReply;
        const transcription = transcripts.shift();
        ws.send(
          JSON.stringify({
            type: 'transcriber-response',
            transcription: 'echo',
            channel: 'assistant',
          }),
        );
        ws.send(
          JSON.stringify({ type: 'transcriber-response', transcription, channel: 'customer' }),
        );
      }
    });
  }
}
