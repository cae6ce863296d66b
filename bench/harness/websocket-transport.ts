import { endianness } from 'node:os';
import WebSocket from 'ws';
import { stageRecord } from './stage-record.js';
import {
  HarnessError,
  type CallerTransport,
  type ConnectedCall,
  type TransportHandlers,
} from './caller-transport.js';

/**
 * The websocket adapter: `POST {baseUrl}/call` with a `parla.websocket` transport (raw PCM16LE at
 * `sampleRateHz`), then a socket to the returned `transport.websocketCallUrl`. Binary frames are
 * audio both ways; text frames are JSON messages. Closing the socket hangs up.
 */
export interface WebsocketTransportOptions {
  baseUrl: string;
  apiKey: string;
  assistantId?: string;
  /** An inline assistant instead of assistantId. */
  assistant?: Record<string, unknown>;
  sampleRateHz?: number;
  /** `parla.websocket` (default) or `vapi.websocket`. */
  provider?: string;
  /** Frames are dropped (and counted) while this much is queued on the socket. Default 256 KiB. */
  maxBufferedBytes?: number;
  /** How long turnStages() waits for the stored call to end. Default 15000 ms. */
  stagesWaitMs?: number;
}

const MAX_RESPONSE_BYTES = 1_000_000;
const MAX_MESSAGE_BYTES = 4_000_000;
const CLOSE_WAIT_MS = 2000;
const SEND_BINARY = { binary: true } as const;
const byteViews = new WeakMap<Int16Array, Buffer>();

export class WebsocketCallerTransport implements CallerTransport {
  readonly #o: WebsocketTransportOptions;
  readonly #rateHz: number;
  #socket: WebSocket | null = null;
  #callId: string | null = null;
  #closing = false;
  #scratch = new Int16Array(4096);
  #carry = -1;
  readonly #views = new Map<number, Int16Array>();
  /** Audio frames not sent because the socket's queue was full. */
  droppedFrames = 0;

  constructor(options: WebsocketTransportOptions) {
    this.#o = options;
    this.#rateHz = options.sampleRateHz ?? 16_000;
    if (!Number.isInteger(this.#rateHz) || this.#rateHz < 8000 || this.#rateHz > 48_000) {
      throw new HarnessError(
        'ERR_BENCH_USAGE',
        'sampleRateHz must be an integer from 8000 to 48000',
      );
    }
    if (endianness() !== 'LE') {
      throw new HarnessError('ERR_BENCH_USAGE', 'the websocket adapter needs a little-endian host');
    }
    if (options.assistantId === undefined && options.assistant === undefined) {
      throw new HarnessError('ERR_BENCH_USAGE', 'an assistantId or an inline assistant is needed');
    }
  }

  async connect(handlers: TransportHandlers): Promise<ConnectedCall> {
    const { callId, url } = await this.#createCall();
    this.#callId = callId;
    const socket = new WebSocket(url, { maxPayload: MAX_MESSAGE_BYTES });
    this.#socket = socket;
    socket.binaryType = 'nodebuffer';
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', (error) =>
        reject(new HarnessError('ERR_BENCH_CONNECT', `websocket ${url}: ${error.message}`)),
      );
      socket.once('unexpected-response', (_request, response) => {
        reject(
          new HarnessError('ERR_BENCH_CONNECT', `websocket ${url} refused: ${response.statusCode}`),
        );
        socket.terminate();
      });
    });
    socket.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) {
        this.#audio(data, handlers);
      } else {
        this.#message(data, handlers);
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', (code: number, reason: Buffer) => {
      if (!this.#closing) {
        handlers.onClose(
          `socket closed (${code}${reason.length > 0 ? ` ${reason.toString()}` : ''})`,
        );
      }
    });
    return { callId, sampleRateHz: this.#rateHz };
  }

  sendAudio(samples: Int16Array): void {
    const socket = this.#socket;
    if (socket === null || socket.readyState !== WebSocket.OPEN) {
      return;
    }
    if (socket.bufferedAmount > (this.#o.maxBufferedBytes ?? 262_144)) {
      this.droppedFrames++;
      return;
    }
    // Frames are shared, unchanging views (see CallerTransport.sendAudio): their byte views are
    // made once, so sending allocates nothing here.
    let bytes = byteViews.get(samples);
    if (bytes === undefined) {
      bytes = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
      byteViews.set(samples, bytes);
    }
    socket.send(bytes, SEND_BINARY);
  }

  sendMessage(message: Record<string, unknown>): void {
    if (this.#socket?.readyState === WebSocket.OPEN) {
      this.#socket.send(JSON.stringify(message));
    }
  }

  async close(): Promise<void> {
    this.#closing = true;
    const socket = this.#socket;
    if (socket === null || socket.readyState === WebSocket.CLOSED) {
      return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        socket.terminate();
        resolve();
      }, CLOSE_WAIT_MS);
      socket.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      socket.close(1000, 'caller hung up');
    });
  }

  /**
   * The call's `artifact.performanceMetrics.turnLatencies` (the platform's per-turn latency
   * breakdown), read once the stored call has ended with its artifact (polled for up to
   * `stagesWaitMs`).
   */
  async turnStages(): Promise<Record<string, number>[]> {
    if (this.#callId === null) {
      return [];
    }
    const url = `${this.#o.baseUrl.replace(/\/+$/, '')}/call/${encodeURIComponent(this.#callId)}`;
    const deadline = Date.now() + (this.#o.stagesWaitMs ?? 15_000);
    for (;;) {
      const response = await fetch(url, {
        headers: { authorization: `Bearer ${this.#o.apiKey}` },
        signal: AbortSignal.timeout(5000),
      });
      const text = await response.text();
      const call: unknown =
        response.ok && text.length <= MAX_RESPONSE_BYTES ? JSON.parse(text) : null;
      if (!isObject(call)) {
        return [];
      }
      // The artifact is stored just after the status turns to ended.
      if ((call.status === 'ended' && isObject(call.artifact)) || Date.now() > deadline) {
        const metrics = isObject(call.artifact) ? call.artifact.performanceMetrics : undefined;
        const list = isObject(metrics) ? metrics.turnLatencies : undefined;
        if (!Array.isArray(list)) {
          return [];
        }
        return list
          .slice(0, 1000)
          .map((entry) => stageRecord(entry))
          .filter((stages): stages is Record<string, number> => stages !== null);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  async #createCall(): Promise<{ callId: string; url: string }> {
    const base = this.#o.baseUrl.replace(/\/+$/, '');
    const body: Record<string, unknown> = {
      transport: {
        provider: this.#o.provider ?? 'parla.websocket',
        audioFormat: { format: 'pcm_s16le', container: 'raw', sampleRate: this.#rateHz },
      },
    };
    if (this.#o.assistantId !== undefined) {
      body.assistantId = this.#o.assistantId;
    } else {
      body.assistant = this.#o.assistant;
    }
    let response: Response;
    try {
      response = await fetch(`${base}/call`, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.#o.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
    } catch (error) {
      throw new HarnessError('ERR_BENCH_CONNECT', `POST ${base}/call failed: ${String(error)}`, {
        cause: error,
      });
    }
    const text = await response.text();
    if (text.length > MAX_RESPONSE_BYTES) {
      throw new HarnessError(
        'ERR_BENCH_PROTOCOL',
        `POST /call answered over ${MAX_RESPONSE_BYTES} bytes`,
      );
    }
    if (!response.ok) {
      throw new HarnessError(
        'ERR_BENCH_CONNECT',
        `POST /call answered ${response.status}: ${text.slice(0, 300)}`,
      );
    }
    let call: unknown;
    try {
      call = JSON.parse(text);
    } catch {
      throw new HarnessError('ERR_BENCH_PROTOCOL', 'POST /call answered with invalid JSON');
    }
    const id = isObject(call) && typeof call.id === 'string' ? call.id : null;
    const transport = isObject(call) && isObject(call.transport) ? call.transport : null;
    const url = transport !== null ? transport.websocketCallUrl : undefined;
    if (id === null || typeof url !== 'string' || !/^wss?:\/\//.test(url)) {
      throw new HarnessError(
        'ERR_BENCH_PROTOCOL',
        'POST /call answered without an id and a ws:// or wss:// transport.websocketCallUrl',
      );
    }
    return { callId: id, url };
  }

  /** PCM16LE of any chunking (odd byte counts carry over) into one reused sample buffer. */
  #audio(data: Buffer, handlers: TransportHandlers): void {
    let offset = 0;
    let count = 0;
    const needed = (data.length + 1) >> 1;
    if (this.#scratch.length < needed) {
      this.#scratch = new Int16Array(needed);
    }
    if (this.#carry >= 0 && data.length > 0) {
      this.#scratch[count++] = (((data[0]! << 8) | this.#carry) << 16) >> 16;
      this.#carry = -1;
      offset = 1;
    }
    for (; offset + 1 < data.length; offset += 2) {
      this.#scratch[count++] = data.readInt16LE(offset);
    }
    if (offset < data.length) {
      this.#carry = data[offset]!;
    }
    if (count > 0) {
      // One view per length over the scratch buffer: steady 20 ms frames reuse the same one.
      let view = this.#views.get(count);
      if (view === undefined || view.buffer !== this.#scratch.buffer) {
        view = this.#scratch.subarray(0, count);
        if (this.#views.size > 64) {
          this.#views.clear();
        }
        this.#views.set(count, view);
      }
      handlers.onAudio(view);
    }
  }

  #message(data: Buffer, handlers: TransportHandlers): void {
    let message: unknown;
    try {
      message = JSON.parse(data.toString('utf8'));
    } catch {
      handlers.onMessage({ type: '(invalid json)' });
      return;
    }
    if (isObject(message)) {
      handlers.onMessage(message);
    }
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
