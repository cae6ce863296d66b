import type { WebSocket } from 'ws';
import { ParlaError } from '../../core/errors.js';
import {
  connectWebSocket,
  SocketTranscriberStream,
  type SocketStreamOptions,
} from './socket-stream.js';
import type {
  Transcriber,
  TranscriberCapabilities,
  TranscriberOpenOptions,
  TranscriberStream,
} from './transcriber.js';

export interface CustomTranscriberOptions {
  connectTimeoutMs?: number;
  closeTimeoutMs?: number;
  maxQueuedSeconds?: number;
}

/**
 * `custom-transcriber`: the assistant's own websocket server at `transcriber.server.url`. We send
 * a `start` JSON frame, then raw PCM16 mono frames; the server answers with
 * `{type: 'transcriber-response', transcription, channel}` frames, each a final transcript.
 */
export class CustomTranscriber implements Transcriber {
  readonly name = 'custom-transcriber';
  readonly capabilities: TranscriberCapabilities = { interimResults: false, endOfTurn: false };
  readonly #options: CustomTranscriberOptions;

  constructor(options: CustomTranscriberOptions = {}) {
    this.#options = options;
  }

  async open(options: TranscriberOpenOptions, signal: AbortSignal): Promise<TranscriberStream> {
    const stream = this.start(options, signal);
    await stream.ready;
    return stream;
  }

  start(options: TranscriberOpenOptions, signal: AbortSignal): CustomTranscriberStream {
    const server = options.config.server as
      { url?: unknown; headers?: unknown; secret?: unknown } | undefined;
    const url = options.baseUrl ?? (typeof server?.url === 'string' ? server.url : undefined);
    const streamOptions: SocketStreamOptions = {
      provider: this.name,
      onEvent: options.onEvent,
      maxQueuedBytes: Math.round((this.#options.maxQueuedSeconds ?? 5) * options.sampleRateHz * 2),
      closeTimeoutMs: this.#options.closeTimeoutMs ?? 3_000,
    };
    const connecting =
      url === undefined || url === ''
        ? Promise.reject(
            new ParlaError('ERR_BAD_REQUEST', `${this.name}: transcriber.server.url is required`),
          )
        : connectWebSocket({
            provider: this.name,
            url,
            headers: {
              ...stringHeaders(server?.headers),
              ...(typeof server?.secret === 'string' ? { 'x-vapi-secret': server.secret } : {}),
              ...(options.apiKey === null ? {} : { authorization: `Bearer ${options.apiKey}` }),
            },
            timeoutMs: this.#options.connectTimeoutMs ?? 10_000,
            signal,
          });
    return new CustomTranscriberStream(streamOptions, connecting, options.sampleRateHz);
  }
}

export class CustomTranscriberStream extends SocketTranscriberStream {
  readonly #sampleRateHz: number;
  #samplesPushed = 0;
  #lastEndMs = 0;

  constructor(options: SocketStreamOptions, connecting: Promise<WebSocket>, sampleRateHz: number) {
    super(options, connecting);
    this.#sampleRateHz = sampleRateHz;
  }

  /** The protocol has no finalise request: the server decides when to answer. */
  finalize(): void {}

  protected onOpen(): void {
    this.sendText({
      type: 'start',
      encoding: 'linear16',
      container: 'raw',
      sampleRate: this.#sampleRateHz,
      channels: 1,
    });
  }

  protected onAudio(sampleCount: number): void {
    this.#samplesPushed += sampleCount;
  }

  protected requestClose(): void {
    this.socket?.close(1000, 'done');
  }

  protected onSocketClosed(): void {}

  protected onText(text: string): void {
    let message: { type?: unknown; transcription?: unknown; channel?: unknown };
    try {
      message = JSON.parse(text) as typeof message;
    } catch {
      return;
    }
    if (
      message === null ||
      typeof message !== 'object' ||
      message.type !== 'transcriber-response' ||
      typeof message.transcription !== 'string' ||
      message.transcription.trim() === '' ||
      (message.channel !== undefined && message.channel !== 'customer')
    ) {
      return;
    }
    // The protocol carries no times: the span is the audio pushed since the previous transcript.
    const endMs = Math.round((this.#samplesPushed * 1000) / this.#sampleRateHz);
    const startMs = Math.min(this.#lastEndMs, endMs);
    this.#lastEndMs = endMs;
    this.emit({
      type: 'transcript',
      text: message.transcription,
      isFinal: true,
      speechFinal: false,
      confidence: 1,
      startMs,
      endMs,
    });
  }
}

function stringHeaders(value: unknown): Record<string, string> {
  const headers: Record<string, string> = {};
  if (value !== null && typeof value === 'object') {
    for (const [name, header] of Object.entries(value)) {
      if (typeof header === 'string') {
        headers[name] = header;
      }
    }
  }
  return headers;
}
