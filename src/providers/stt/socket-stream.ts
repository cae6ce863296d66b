import type { IncomingMessage } from 'node:http';
import { WebSocket, type RawData } from 'ws';
import { ParlaError } from '../../core/errors.js';
import { ProviderError } from '../provider-error.js';
import { AudioSendQueue, pcmBytes } from './audio-queue.js';
import type { TranscriberEvent, TranscriberStream } from './transcriber.js';

const MAX_ERROR_BODY_BYTES = 4096;
const MAX_MESSAGE_BYTES = 1024 * 1024;

export interface ConnectOptions {
  provider: string;
  url: string;
  headers: Record<string, string>;
  /** Gives up (retryable ProviderError) when the upgrade has not completed by then. */
  timeoutMs: number;
  signal: AbortSignal;
  /** Reads the vendor's message out of a refused upgrade's body. */
  errorMessage?: (body: string) => string | undefined;
}

/**
 * Opens a websocket. A refused upgrade rejects with a ProviderError carrying the HTTP status (so
 * 401/403 do not retry, 429/5xx do); a network failure or timeout with a retryable one.
 */
export function connectWebSocket(options: ConnectOptions): Promise<WebSocket> {
  const { provider, signal } = options;
  if (signal.aborted) {
    return Promise.reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
  }
  let socket: WebSocket;
  try {
    socket = new WebSocket(options.url, {
      headers: options.headers,
      maxPayload: MAX_MESSAGE_BYTES,
      perMessageDeflate: false,
    });
  } catch (error) {
    return Promise.reject(
      new ParlaError('ERR_BAD_REQUEST', `${provider}: cannot connect to ${options.url}`, {
        cause: error,
      }),
    );
  }
  return new Promise<WebSocket>((resolve, reject) => {
    let settled = false;
    const settle = (error: Error | null): void => {
      if (settled) {
        return;
      }
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      if (error === null) {
        resolve(socket);
        return;
      }
      socket.removeAllListeners('open');
      socket.terminate();
      reject(error);
    };
    const onAbort = (): void =>
      settle(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(
      () =>
        settle(
          new ProviderError(provider, `no connection within ${options.timeoutMs} ms`, null, {
            timeout: true,
          }),
        ),
      options.timeoutMs,
    );
    // Always listened to: an unhandled 'error' would crash the process.
    socket.on('error', (error) =>
      settle(
        new ProviderError(provider, `connection failed: ${error.message}`, null, { cause: error }),
      ),
    );
    socket.once('open', () => settle(null));
    socket.once('unexpected-response', (request, response: IncomingMessage) => {
      const status = response.statusCode ?? 0;
      void readBody(response).then((body) => {
        request.destroy();
        const vendor = options.errorMessage?.(body) ?? body.slice(0, 300).trim();
        settle(
          new ProviderError(
            provider,
            `HTTP ${status}${vendor === '' ? '' : `: ${vendor}`}`,
            status === 0 ? null : status,
          ),
        );
      });
    });
  });
}

async function readBody(response: IncomingMessage): Promise<string> {
  let body = '';
  try {
    for await (const chunk of response) {
      body += String(chunk);
      if (body.length >= MAX_ERROR_BODY_BYTES) {
        break;
      }
    }
  } catch {
    // Keep what arrived.
  }
  return body.slice(0, MAX_ERROR_BODY_BYTES);
}

export interface SocketStreamOptions {
  provider: string;
  onEvent: (event: TranscriberEvent) => void;
  maxQueuedBytes: number;
  closeTimeoutMs: number;
}

/**
 * The vendor-independent half of a websocket transcriber stream: audio queued while connecting
 * and sent in order, text frames handed to `onText`, an orderly close that waits for the vendor,
 * and an `error` event when the vendor drops the connection on its own.
 */
export abstract class SocketTranscriberStream implements TranscriberStream {
  /** Resolves once connected; rejects as the connection attempt did. */
  readonly ready: Promise<void>;
  protected readonly provider: string;
  protected socket: WebSocket | null = null;
  protected readonly queue: AudioSendQueue;
  readonly #onEvent: (event: TranscriberEvent) => void;
  readonly #closeTimeoutMs: number;
  #closing = false;
  #closed = false;
  #closePromise: Promise<void> | null = null;
  #onSocketClosed: (() => void) | null = null;

  constructor(options: SocketStreamOptions, connecting: Promise<WebSocket>) {
    this.provider = options.provider;
    this.#onEvent = options.onEvent;
    this.#closeTimeoutMs = options.closeTimeoutMs;
    this.queue = new AudioSendQueue({ maxQueuedBytes: options.maxQueuedBytes });
    this.ready = connecting.then(
      (socket) => this.#attach(socket),
      (error: unknown) => {
        this.#closed = true;
        this.queue.clear();
        throw error;
      },
    );
    // Whoever awaits `ready` sees the failure; nobody awaiting is not an unhandled rejection.
    this.ready.catch(() => undefined);
  }

  /** Audio bytes dropped because the queue was full. */
  get droppedBytes(): number {
    return this.queue.droppedBytes;
  }

  get isClosing(): boolean {
    return this.#closing || this.#closed;
  }

  pushAudio(samples: Int16Array): void {
    if (this.isClosing || samples.length === 0) {
      return;
    }
    this.onAudio(samples.length);
    this.queue.push(pcmBytes(samples));
  }

  abstract finalize(): void;

  close(): Promise<void> {
    this.#closePromise ??= this.#close();
    return this.#closePromise;
  }

  protected emit(event: TranscriberEvent): void {
    if (!this.#closed || event.type === 'closed') {
      this.#onEvent(event);
    }
  }

  protected sendText(message: object): void {
    const socket = this.socket;
    if (socket !== null && socket.readyState === socket.OPEN) {
      socket.send(JSON.stringify(message));
    }
  }

  /** Called once connected, before any queued audio is sent. */
  protected abstract onOpen(): void;
  /** Called for every pushed chunk (before it is queued). */
  protected abstract onAudio(sampleCount: number): void;
  protected abstract onText(text: string): void;
  /** Asks the vendor to end the stream; the vendor then closes the socket. */
  protected abstract requestClose(): void;
  /** Timers and such to release when the socket closes. */
  protected abstract onSocketClosed(): void;

  async #close(): Promise<void> {
    this.#closing = true;
    try {
      await this.ready;
    } catch {
      return;
    }
    const socket = this.socket;
    if (this.#closed || socket === null) {
      return;
    }
    const closed = new Promise<void>((resolve) => {
      this.#onSocketClosed = resolve;
    });
    this.queue.flushAll();
    this.requestClose();
    const timer = setTimeout(() => socket.terminate(), this.#closeTimeoutMs);
    try {
      await closed;
    } finally {
      clearTimeout(timer);
    }
  }

  #attach(socket: WebSocket): void {
    this.socket = socket;
    socket.on('message', (data: RawData, isBinary: boolean) => {
      if (!isBinary) {
        this.onText(rawText(data));
      }
    });
    let lastError: Error | null = null;
    socket.on('error', (error) => {
      lastError = error;
    });
    socket.on('close', (code: number, reason: Buffer) => {
      this.onSocketClosed();
      this.queue.clear();
      if (!this.#closing) {
        const why = reason.length > 0 ? `: ${reason.toString()}` : '';
        const cause = lastError === null ? {} : { cause: lastError };
        this.emit({
          type: 'error',
          error: new ProviderError(
            this.provider,
            `connection closed unexpectedly (code ${code}${why})`,
            null,
            cause,
          ),
        });
      }
      this.#closed = true;
      this.emit({ type: 'closed' });
      this.#onSocketClosed?.();
    });
    this.onOpen();
    this.queue.attach(socket);
  }
}

function rawText(data: RawData): string {
  if (Array.isArray(data)) {
    return Buffer.concat(data).toString('utf8');
  }
  return (data instanceof ArrayBuffer ? Buffer.from(data) : data).toString('utf8');
}
