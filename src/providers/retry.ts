import { ProviderError } from './provider-error.js';

export interface RetryOptions {
  /** Attempts in all, the first included (1 = no retry). */
  maxAttempts: number;
  /** Cap of the first backoff; it doubles with each retry. */
  baseDelayMs: number;
  /** No backoff exceeds this. */
  maxDelayMs: number;
  /** Source of jitter in [0, 1); Math.random by default (injected by tests). */
  random?: () => number;
}

/** Waits `ms`, rejecting with the signal's reason as soon as `signal` aborts. */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

/** What each attempt is told. */
export interface Attempt {
  /** 1 for the first attempt. */
  number: number;
  /**
   * Call once the attempt has produced output the caller passed on (a text delta spoken or
   * sent): from then on a failure of this attempt is thrown as is, never retried, since a
   * second attempt would repeat what the listener already has.
   */
  outputStarted(): void;
}

export const abortableSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });

/**
 * Full-jitter exponential backoff before retry number `retry` (1 = the first retry): uniform in
 * [0, min(maxDelayMs, baseDelayMs * 2^(retry-1))).
 */
export function backoffDelay(retry: number, options: RetryOptions): number {
  const cap = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.floor((options.random ?? Math.random)() * cap);
}

/** True when `error` is a vendor failure worth another attempt. */
export function isRetryable(error: unknown): boolean {
  return error instanceof ProviderError && error.retryable;
}

/**
 * Runs `fn` until it succeeds, retrying only a ProviderError with `retryable` set, at most
 * `maxAttempts` times in all, with full-jitter exponential backoff between attempts. Once an
 * attempt has called `attempt.outputStarted()` its failure is thrown as is (see Attempt).
 * Aborting `signal` stops at once (also during a backoff) with the signal's reason.
 */
export async function withRetry<T>(
  fn: (attempt: Attempt) => Promise<T>,
  options: RetryOptions,
  signal: AbortSignal,
  sleep: Sleep = abortableSleep,
): Promise<T> {
  const maxAttempts = Math.max(1, Math.floor(options.maxAttempts));
  for (let number = 1; ; number++) {
    signal.throwIfAborted();
    let started = false;
    try {
      return await fn({
        number,
        outputStarted: () => {
          started = true;
        },
      });
    } catch (error) {
      if (signal.aborted) {
        throw signal.reason;
      }
      if (started || number >= maxAttempts || !isRetryable(error)) {
        throw error;
      }
    }
    await sleep(backoffDelay(number, options), signal);
  }
}

/**
 * withRetry for a stream: opens `open()` again after a retryable failure, but only while the
 * failed attempt has yielded nothing; after the first event, failures pass through.
 */
export async function* retryStream<T>(
  open: (attempt: number) => AsyncIterable<T>,
  options: RetryOptions,
  signal: AbortSignal,
  sleep: Sleep = abortableSleep,
): AsyncGenerator<T> {
  const maxAttempts = Math.max(1, Math.floor(options.maxAttempts));
  for (let number = 1; ; number++) {
    signal.throwIfAborted();
    let started = false;
    try {
      for await (const event of open(number)) {
        started = true;
        yield event;
      }
      return;
    } catch (error) {
      if (signal.aborted) {
        throw signal.reason;
      }
      if (started || number >= maxAttempts || !isRetryable(error)) {
        throw error;
      }
    }
    await sleep(backoffDelay(number, options), signal);
  }
}
