import { ParlaError } from '../core/errors.js';
import { ProviderError } from './provider-error.js';

/** Bounds on what a vendor (or a URL chosen by a tenant, e.g. custom-llm) can make us hold. */
export const MAX_LINE_CHARS = 1024 * 1024;
export const MAX_REPLY_CHARS = 16 * 1024 * 1024;
export const MAX_ERROR_BODY_CHARS = 64 * 1024;

export interface VendorStreamRequest {
  provider: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  firstByteTimeoutMs: number;
  /** Hand a JSON reply (a server that ignored `stream: true`) over whole instead of by lines. */
  acceptJsonReply?: boolean;
}

/** One line of a streamed reply, or the whole body of a JSON reply. */
export type VendorChunk = { line: string } | { json: string };

/**
 * POSTs a streaming request and yields the reply line by line (SSE), with the behaviour every
 * streaming adapter needs: the caller's abort cancels the request, a first-byte timeout, HTTP
 * errors as ProviderError with the vendor's status and message, bounded line and reply sizes,
 * and only new text scanned for line ends (a long line costs linear time). Stopping iteration
 * early releases the connection.
 */
export async function* streamVendorLines(
  request: VendorStreamRequest,
  signal: AbortSignal,
): AsyncGenerator<VendorChunk> {
  signal.throwIfAborted();
  const provider = request.provider;
  // One controller for the fetch: the caller's signal and the first-byte timer both abort it.
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, request.firstByteTimeoutMs);
  const fail = (error: unknown): unknown =>
    requestFailure(provider, error, signal, timedOut, request.firstByteTimeoutMs);
  try {
    let response: Response;
    try {
      response = await fetch(request.url, {
        method: 'POST',
        headers: request.headers,
        body: JSON.stringify(request.body),
        signal: controller.signal,
      });
    } catch (error) {
      throw fail(error);
    }
    if (!response.ok || response.body === null) {
      throw await vendorHttpError(provider, response).catch(fail);
    }
    if (
      request.acceptJsonReply === true &&
      response.headers.get('content-type')?.includes('application/json') === true
    ) {
      let text: string;
      try {
        text = await readLimited(response, MAX_REPLY_CHARS);
      } catch (error) {
        throw fail(error);
      }
      clearTimeout(timer);
      yield { json: text };
      return;
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = '';
    let receivedChars = 0;
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
      receivedChars += chunk.value.length;
      if (receivedChars > MAX_REPLY_CHARS) {
        throw new ProviderError(provider, `reply longer than ${MAX_REPLY_CHARS} characters`, null);
      }
      let text = chunk.value;
      let newline = text.indexOf('\n');
      while (newline !== -1) {
        const line = (buffered + text.slice(0, newline)).replace(/\r$/, '');
        buffered = '';
        text = text.slice(newline + 1);
        if (line.length > MAX_LINE_CHARS) {
          throw new ProviderError(
            provider,
            `reply line longer than ${MAX_LINE_CHARS} characters`,
            null,
          );
        }
        yield { line };
        newline = text.indexOf('\n');
      }
      buffered += text;
      if (buffered.length > MAX_LINE_CHARS) {
        throw new ProviderError(
          provider,
          `reply line longer than ${MAX_LINE_CHARS} characters`,
          null,
        );
      }
    }
    yield { line: buffered.replace(/\r$/, '') };
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
    controller.abort();
  }
}

/** What a failed request becomes: the caller's abort reason, a timeout, or a retryable ProviderError. */
export function requestFailure(
  provider: string,
  error: unknown,
  signal: AbortSignal,
  timedOut: boolean,
  firstByteTimeoutMs: number,
): unknown {
  if (signal.aborted) {
    return signal.reason ?? error;
  }
  if (timedOut) {
    return new ProviderError(provider, `no reply within ${firstByteTimeoutMs} ms`, null, {
      cause: error,
      timeout: true,
    });
  }
  if (error instanceof ParlaError) {
    return error;
  }
  const reason = (error as { cause?: { message?: unknown } }).cause?.message;
  const message = error instanceof Error ? error.message : String(error);
  return new ProviderError(
    provider,
    `request failed: ${message}${typeof reason === 'string' ? ` (${reason})` : ''}`,
    null,
    { cause: error },
  );
}

/** A non-2xx reply as a ProviderError; the vendor's `{error: string | {message}}` is quoted. */
export async function vendorHttpError(
  provider: string,
  response: Response,
): Promise<ProviderError> {
  const text = await readLimited(response, MAX_ERROR_BODY_CHARS);
  let message = text.slice(0, 300);
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string };
    const vendor = typeof parsed.error === 'string' ? parsed.error : parsed.error?.message;
    if (typeof vendor === 'string') {
      message = vendor;
    }
  } catch {
    // Not JSON: keep the start of the body as the message.
  }
  return new ProviderError(
    provider,
    `HTTP ${response.status}${message === '' ? '' : `: ${message}`}`,
    response.status,
  );
}

/** Reads at most `limit` characters of a body, then stops reading (the rest is discarded). */
export async function readLimited(response: Response, limit: number): Promise<string> {
  if (response.body === null) {
    return '';
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        return text;
      }
      text += value;
      if (text.length > limit) {
        throw new Error(`body longer than ${limit} characters`);
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
