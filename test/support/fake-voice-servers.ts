import { once } from 'node:events';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';

/**
 * The PCM16 bytes every fake voice vendor speaks for `text` at `sampleRateHz`: deterministic,
 * an even number of bytes, no two neighbouring bytes alike (so a dropped or shifted byte shows).
 */
export function fakePcm(text: string, sampleRateHz: number): Uint8Array {
  let seed = sampleRateHz;
  for (const char of text) {
    seed = (seed * 31 + char.charCodeAt(0)) >>> 0;
  }
  const bytes = new Uint8Array((text.length * 40 + Math.floor(sampleRateHz / 100)) * 2);
  for (let i = 0; i < bytes.length; i++) {
    bytes[i] = (seed + i * 7) & 0xff;
  }
  return bytes;
}

/** Odd-sized pieces (1, 3, 7, 333, 1001 bytes, repeating) so samples straddle chunk borders. */
export const ODD_CHUNK_SIZES = [1, 3, 7, 333, 1001];

export function oddChunks(
  bytes: Uint8Array,
  sizes: readonly number[] = ODD_CHUNK_SIZES,
): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let start = 0, i = 0; start < bytes.length; i++) {
    const size = sizes[i % sizes.length]!;
    chunks.push(bytes.subarray(start, start + size));
    start += size;
  }
  return chunks;
}

/** One scripted answer. */
export interface FakeVoiceReply {
  /** Answer with this status and an error body instead of audio. */
  status?: number;
  errorBody?: string;
  /** Wait this long between audio chunks. */
  chunkDelayMs?: number;
  /** Send this many audio chunks, then nothing more until the client goes away. */
  hangAfterChunks?: number;
  /** Send no audio at all until the client goes away. */
  hangBeforeAudio?: boolean;
  /** Time to first byte of this reply, instead of the server's distribution. */
  firstByteDelayMs?: number;
}

/**
 * A vendor's time to first audio byte: `firstByteDelayMs` + U(0, `firstByteJitterMs`), drawn with
 * `random` (default Math.random) for each reply. Both 0 by default: audio at once, as before.
 */
class FirstByteLatency {
  firstByteDelayMs = 0;
  firstByteJitterMs = 0;
  random: () => number = Math.random;
  /** The delays used, one per reply that sent audio, oldest first (the last 1,000). */
  readonly firstByteDelaysMs: number[] = [];

  protected drawFirstByteDelayMs(reply: FakeVoiceReply): number {
    const delayMs =
      reply.firstByteDelayMs ?? this.firstByteDelayMs + this.random() * this.firstByteJitterMs;
    if (this.firstByteDelaysMs.push(delayMs) > 1000) {
      this.firstByteDelaysMs.shift();
    }
    return delayMs;
  }
}

export interface RecordedVoiceRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: any;
  /** The client went away before the reply was complete. */
  aborted: boolean;
  /** Resolves when the connection is over, whichever side ended it. */
  closed: Promise<void>;
}

export type FakeSpeechKind = 'openai' | '11labs' | 'custom-voice';

const SPEECH_PATHS: Record<FakeSpeechKind, RegExp> = {
  openai: /^\/v1\/audio\/speech$/,
  '11labs': /^\/v1\/text-to-speech\/[^/]+\/stream$/,
  'custom-voice': /^\/voice$/,
};

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

class Script {
  readonly #queue: FakeVoiceReply[] = [];
  enqueue(...replies: FakeVoiceReply[]): void {
    this.#queue.push(...replies);
  }
  next(): FakeVoiceReply {
    return this.#queue.shift() ?? {};
  }
}

/**
 * A local HTTP server speaking OpenAI speech (`/v1/audio/speech`, 24 kHz, bearer key),
 * ElevenLabs streaming (`/v1/text-to-speech/{id}/stream?output_format=pcm_N`, `xi-api-key`) or a
 * custom-voice webhook (`/voice`, `{message: {type: 'voice-request', text, sampleRate}}`). Audio is
 * fakePcm(text, rate) in oddChunks, the first chunk after the time to first byte (FirstByteLatency:
 * 0 unless set). A wrong key gets 401 (OpenAI, ElevenLabs).
 */
export class FakeSpeechServer extends FirstByteLatency {
  readonly kind: FakeSpeechKind;
  readonly apiKey: string;
  readonly requests: RecordedVoiceRequest[] = [];
  readonly #script = new Script();
  readonly #server: Server = createServer((req, res) => void this.#handle(req, res));
  #url = '';

  constructor(kind: FakeSpeechKind, apiKey = 'test-key') {
    super();
    this.kind = kind;
    this.apiKey = apiKey;
  }

  /** `http://127.0.0.1:N/v1` for OpenAI, `http://127.0.0.1:N` for ElevenLabs, the hook URL for custom-voice. */
  get url(): string {
    return this.kind === 'openai'
      ? `${this.#url}/v1`
      : this.kind === 'custom-voice'
        ? `${this.#url}/voice`
        : this.#url;
  }

  enqueue(...replies: FakeVoiceReply[]): void {
    this.#script.enqueue(...replies);
  }

  async start(): Promise<void> {
    this.#server.listen(0, '127.0.0.1');
    await once(this.#server, 'listening');
    const { port } = this.#server.address() as AddressInfo;
    this.#url = `http://127.0.0.1:${port}`;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    this.#server.close();
    await once(this.#server, 'close');
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const chunks: Buffer[] = [];
    for await (const chunk of req) {
      chunks.push(chunk as Buffer);
    }
    let body: any;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      body = undefined;
    }
    const record: RecordedVoiceRequest = {
      method: req.method ?? '',
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      body,
      aborted: false,
      closed: once(res, 'close').then(() => undefined),
    };
    res.on('close', () => {
      record.aborted = !res.writableFinished;
    });
    this.requests.push(record);
    const reply = this.#script.next();

    if (req.method !== 'POST' || !SPEECH_PATHS[this.kind].test(url.pathname)) {
      return this.#error(res, 404, 'not found');
    }
    if (!this.#authorized(req)) {
      return this.#error(res, 401, 'invalid api key');
    }
    if (reply.status !== undefined) {
      return this.#error(res, reply.status, reply.errorBody ?? `scripted ${reply.status}`);
    }
    const text = this.kind === 'custom-voice' ? body?.message?.text : (body?.input ?? body?.text);
    const rate = this.#rate(url, body);
    if (typeof text !== 'string' || rate === null) {
      return this.#error(res, 400, 'bad request');
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    res.flushHeaders();
    if (reply.hangBeforeAudio === true) {
      return;
    }
    const firstByteMs = this.drawFirstByteDelayMs(reply);
    if (firstByteMs > 0) {
      await sleep(firstByteMs);
    }
    for (const [i, chunk] of oddChunks(fakePcm(text, rate)).entries()) {
      if (res.destroyed) {
        return;
      }
      res.write(chunk);
      if (i + 1 === reply.hangAfterChunks) {
        return;
      }
      if (reply.chunkDelayMs !== undefined) {
        await sleep(reply.chunkDelayMs);
      }
    }
    res.end();
  }

  #authorized(req: IncomingMessage): boolean {
    if (this.kind === 'openai') {
      return req.headers.authorization === `Bearer ${this.apiKey}`;
    }
    if (this.kind === '11labs') {
      return req.headers['xi-api-key'] === this.apiKey;
    }
    return true;
  }

  #rate(url: URL, body: any): number | null {
    if (this.kind === 'openai') {
      return body?.response_format === 'pcm' ? 24_000 : null;
    }
    if (this.kind === '11labs') {
      const match = /^pcm_(\d+)$/.exec(url.searchParams.get('output_format') ?? '');
      return match === null ? null : Number(match[1]);
    }
    const rate = body?.message?.sampleRate;
    return body?.message?.type === 'voice-request' && typeof rate === 'number' ? rate : null;
  }

  #error(res: ServerResponse, status: number, message: string): void {
    const body =
      this.kind === '11labs'
        ? { detail: { status: 'error', message } }
        : { error: { message, type: 'fake' } };
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }
}

export interface RecordedCartesiaRequest {
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** The first message the client sent. */
  message: any;
  /** The client closed or dropped the socket before `done`. */
  aborted: boolean;
  closed: Promise<void>;
}

/** A cartesia error message in place of audio. */
export interface FakeCartesiaReply extends FakeVoiceReply {
  /** Reply with `{type: 'error', error, status_code: status}` after the request. */
  wireError?: string;
}

/**
 * A local `ws` server speaking Cartesia's TTS websocket at `/tts/websocket`: checks `api_key` in
 * the query (401 on upgrade otherwise), answers a request with base64 `chunk` messages of
 * fakePcm in oddChunks (the first after the time to first byte, see FirstByteLatency), then
 * `done`. `status` rejects the upgrade with that HTTP status.
 */
export class FakeCartesiaServer extends FirstByteLatency {
  readonly apiKey: string;
  readonly requests: RecordedCartesiaRequest[] = [];
  readonly #script = new Script();
  readonly #server: Server = createServer((_req, res) => res.writeHead(426).end());
  readonly #wss = new WebSocketServer({ noServer: true });
  #url = '';

  constructor(apiKey = 'test-key') {
    super();
    this.apiKey = apiKey;
    this.#server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      this.#upgrade(req, socket, head),
    );
  }

  /** `ws://127.0.0.1:N`. */
  get url(): string {
    return this.#url;
  }

  enqueue(...replies: FakeCartesiaReply[]): void {
    this.#script.enqueue(...replies);
  }

  async start(): Promise<void> {
    this.#server.listen(0, '127.0.0.1');
    await once(this.#server, 'listening');
    const { port } = this.#server.address() as AddressInfo;
    this.#url = `ws://127.0.0.1:${port}`;
  }

  async stop(): Promise<void> {
    for (const client of this.#wss.clients) {
      client.terminate();
    }
    this.#wss.close();
    this.#server.closeAllConnections();
    this.#server.close();
    await once(this.#server, 'close');
  }

  #upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://fake');
    const reply: FakeCartesiaReply = this.#script.next();
    const status =
      url.pathname !== '/tts/websocket'
        ? 404
        : url.searchParams.get('api_key') !== this.apiKey
          ? 401
          : reply.status;
    if (status !== undefined) {
      socket.end(`HTTP/1.1 ${status} Rejected\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
      return;
    }
    this.#wss.handleUpgrade(req, socket, head, (ws) => this.#connection(ws, req, url, reply));
  }

  #connection(ws: WebSocket, req: IncomingMessage, url: URL, reply: FakeCartesiaReply): void {
    let finished = false;
    const record: RecordedCartesiaRequest = {
      query: url.searchParams,
      headers: req.headers,
      message: undefined,
      aborted: false,
      closed: once(ws, 'close').then(() => undefined),
    };
    ws.on('close', () => {
      record.aborted = !finished;
    });
    this.requests.push(record);
    ws.once('message', (data) => {
      const message = JSON.parse((data as Buffer).toString('utf8'));
      record.message = message;
      void this.#speak(ws, message, reply).then(() => {
        finished = true;
      });
    });
  }

  async #speak(ws: WebSocket, message: any, reply: FakeCartesiaReply): Promise<void> {
    const contextId = message.context_id;
    if (reply.wireError !== undefined) {
      ws.send(
        JSON.stringify({
          type: 'error',
          context_id: contextId,
          status_code: 400,
          done: true,
          error: reply.wireError,
        }),
      );
      return;
    }
    if (reply.hangBeforeAudio === true) {
      await once(ws, 'close');
      return;
    }
    const firstByteMs = this.drawFirstByteDelayMs(reply);
    if (firstByteMs > 0) {
      await sleep(firstByteMs);
    }
    const pcm = fakePcm(message.transcript, message.output_format.sample_rate);
    for (const [i, chunk] of oddChunks(pcm).entries()) {
      if (ws.readyState !== ws.OPEN) {
        await once(ws, 'close');
        return;
      }
      ws.send(
        JSON.stringify({
          type: 'chunk',
          context_id: contextId,
          status_code: 206,
          done: false,
          data: Buffer.from(chunk).toString('base64'),
        }),
      );
      if (i + 1 === reply.hangAfterChunks) {
        await once(ws, 'close');
        return;
      }
      if (reply.chunkDelayMs !== undefined) {
        await sleep(reply.chunkDelayMs);
      }
    }
    ws.send(JSON.stringify({ type: 'done', context_id: contextId, status_code: 206, done: true }));
  }
}
