import { ParlaError } from '../../core/errors.js';
import { ProviderError } from '../provider-error.js';

/** How much of an error body is read to build the message. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;
/** Network chunks larger than this are cut, so one yield never holds more. */
const MAX_CHUNK_BYTES = 64 * 1024;
export const DEFAULT_FIRST_BYTE_TIMEOUT_MS = 30_000;

const HOST_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Cuts a byte stream of PCM16 little-endian samples into Int16Arrays. A sample split between two
 * network chunks is carried over, so no byte is ever dropped or misaligned.
 */
export class Pcm16Assembler {
  #carry: number | null = null;

  /** The whole samples now available (an empty array when none). */
  push(bytes: Uint8Array): Int16Array {
    const carried = this.#carry;
    const samples = new Int16Array((bytes.length + (carried === null ? 0 : 1)) >> 1);
    if (samples.length === 0) {
      if (bytes.length === 1) {
        this.#carry = bytes[0]!;
      }
      return samples;
    }
    const out = new Uint8Array(samples.buffer);
    let written = 0;
    let read = 0;
    if (carried !== null) {
      out[0] = carried;
      out[1] = bytes[0]!;
      written = 2;
      read = 1;
    }
    const whole = out.length - written;
    out.set(bytes.subarray(read, read + whole), written);
    read += whole;
    this.#carry = read < bytes.length ? bytes[read]! : null;
    if (!HOST_LITTLE_ENDIAN) {
      for (let i = 0; i < out.length; i += 2) {
        const low = out[i]!;
        out[i] = out[i + 1]!;
        out[i + 1] = low;
      }
    }
    return samples;
  }

  /** A half sample is left over (the stream ended on an odd byte). */
  get pendingByte(): boolean {
    return this.#carry !== null;
  }
}

/** Splits `bytes` into views of at most MAX_CHUNK_BYTES. */
export function* boundedChunks(bytes: Uint8Array): Generator<Uint8Array> {
  for (let start = 0; start < bytes.length; start += MAX_CHUNK_BYTES) {
    yield bytes.subarray(start, start + MAX_CHUNK_BYTES);
  }
}

export interface HttpPcmRequest {
  provider: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  firstByteTimeoutMs: number;
  /** Pulls a vendor message out of a parsed JSON error body. */
  errorMessage?: (body: unknown) => string | undefined;
}

/**
 * POSTs JSON and streams the raw PCM16 reply. The caller's signal and a first-byte timer abort
 * the request; reads follow the consumer (nothing is buffered ahead beyond one network chunk).
 */
export async function* streamHttpPcm(
  request: HttpPcmRequest,
  signal: AbortSignal,
): AsyncGenerator<Int16Array> {
  signal.throwIfAborted();
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, request.firstByteTimeoutMs);
  const fail = (error: unknown): unknown =>
    failure(request.provider, error, signal, timedOut ? request.firstByteTimeoutMs : null);
  try {
    let response: Response;
    try {
      response = await fetch(request.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...request.headers },
        body: JSON.stringify(request.body),
        signal: controller.signal,
      });
    } catch (error) {
      throw fail(error);
    }
    if (!response.ok || response.body === null) {
      throw await httpError(request.provider, response, request.errorMessage).catch(fail);
    }
    const contentType = response.headers.get('content-type') ?? '';
    if (contentType.includes('application/json') || contentType.startsWith('text/')) {
      // A 2xx that is not audio: an error in disguise, which a retry will not fix.
      const error = await httpError(request.provider, response, request.errorMessage).catch(fail);
      throw error instanceof ProviderError
        ? new ProviderError(request.provider, `expected audio, got ${contentType}`, 400, {
            cause: error,
          })
        : error;
    }
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const assembler = new Pcm16Assembler();
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        throw fail(error);
      }
      clearTimeout(timer);
      if (chunk.done) {
        break;
      }
      for (const piece of boundedChunks(chunk.value)) {
        const samples = assembler.push(piece);
        if (samples.length > 0) {
          yield samples;
        }
      }
    }
    // A lone trailing byte is half a sample: it cannot be played, so it ends here.
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
    controller.abort();
  }
}

/** Maps a thrown fetch/read error: the caller's abort reason, a timeout, or a ProviderError. */
export function failure(
  provider: string,
  error: unknown,
  signal: AbortSignal,
  timeoutMs: number | null,
): unknown {
  if (signal.aborted) {
    return signal.reason ?? error;
  }
  if (timeoutMs !== null) {
    return new ProviderError(provider, `no audio within ${timeoutMs} ms`, null, {
      cause: error,
      timeout: true,
    });
  }
  if (error instanceof ParlaError) {
    return error;
  }
  const reason = (error as { cause?: { message?: unknown } } | null)?.cause?.message;
  const message = error instanceof Error ? error.message : String(error);
  return new ProviderError(
    provider,
    `request failed: ${message}${typeof reason === 'string' ? ` (${reason})` : ''}`,
    null,
    { cause: error },
  );
}

async function httpError(
  provider: string,
  response: Response,
  extract: ((body: unknown) => string | undefined) | undefined,
): Promise<ProviderError> {
  const text = await readLimited(response, MAX_ERROR_BODY_BYTES);
  let message = text.slice(0, 300);
  try {
    const vendor = (extract ?? defaultErrorMessage)(JSON.parse(text));
    if (vendor !== undefined && vendor !== '') {
      message = vendor;
    }
  } catch {
    // Not JSON: keep the start of the body.
  }
  return new ProviderError(
    provider,
    `HTTP ${response.status}${message === '' ? '' : `: ${message}`}`,
    response.status,
  );
}

function defaultErrorMessage(body: unknown): string | undefined {
  const error = (body as { error?: unknown; message?: unknown } | null)?.error;
  if (typeof error === 'string') {
    return error;
  }
  const nested = (error as { message?: unknown } | undefined)?.message;
  if (typeof nested === 'string') {
    return nested;
  }
  const message = (body as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : undefined;
}

/** At most `limit` bytes of a body as text; the rest is discarded unread. */
async function readLimited(response: Response, limit: number): Promise<string> {
  if (response.body === null) {
    return '';
  }
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  let bytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        return text + decoder.decode();
      }
      const room = limit - bytes;
      bytes += value.length;
      text += decoder.decode(value.subarray(0, Math.max(room, 0)), { stream: true });
      if (bytes >= limit) {
        return text;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** A string field of a config object, when present and non-empty. */
export function stringField(config: Readonly<Record<string, unknown>>, key: string): string | null {
  const value = config[key];
  return typeof value === 'string' && value !== '' ? value : null;
}

/** A finite number field of a config object, when present. */
export function numberField(config: Readonly<Record<string, unknown>>, key: string): number | null {
  const value = config[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

export function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
