import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../src/providers/provider-error.js';
import {
  abortableSleep,
  backoffDelay,
  retryStream,
  withRetry,
  type RetryOptions,
  type Sleep,
} from '../../src/providers/retry.js';

const options: RetryOptions = { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 250 };

function recordingSleep(): { sleep: Sleep; delays: number[] } {
  const delays: number[] = [];
  return {
    delays,
    sleep: (ms, signal) => {
      delays.push(ms);
      signal.throwIfAborted();
      return Promise.resolve();
    },
  };
}

const retryable = (): ProviderError => new ProviderError('openai', 'HTTP 503', 503);
const fatal = (): ProviderError => new ProviderError('openai', 'HTTP 401', 401);

describe('withRetry', () => {
  it('retries retryable ProviderErrors, then succeeds', async () => {
    const { sleep, delays } = recordingSleep();
    let calls = 0;
    const result = await withRetry(
      (attempt) => {
        calls++;
        expect(attempt.number).toBe(calls);
        return calls < 3 ? Promise.reject(retryable()) : Promise.resolve('ok');
      },
      { ...options, random: () => 0.5 },
      new AbortController().signal,
      sleep,
    );
    expect(result).toBe('ok');
    expect(calls).toBe(3);
    // Full jitter: random * min(max, base * 2^(retry-1)).
    expect(delays).toEqual([50, 100]);
  });

  it('stops after maxAttempts and throws the last error', async () => {
    const { sleep, delays } = recordingSleep();
    let calls = 0;
    const error = retryable();
    await expect(
      withRetry(
        () => {
          calls++;
          return Promise.reject(error);
        },
        options,
        new AbortController().signal,
        sleep,
      ),
    ).rejects.toBe(error);
    expect(calls).toBe(4);
    expect(delays).toHaveLength(3);
  });

  it('keeps every backoff within [0, min(maxDelayMs, base * 2^n))', () => {
    for (let retry = 1; retry <= 6; retry++) {
      const cap = Math.min(250, 100 * 2 ** (retry - 1));
      expect(backoffDelay(retry, { ...options, random: () => 0 })).toBe(0);
      expect(backoffDelay(retry, { ...options, random: () => 0.999999 })).toBeLessThan(cap);
      for (let i = 0; i < 50; i++) {
        const delay = backoffDelay(retry, options);
        expect(delay).toBeGreaterThanOrEqual(0);
        expect(delay).toBeLessThan(cap);
      }
    }
  });

  it('passes non-retryable errors and non-provider errors through at once', async () => {
    const { sleep, delays } = recordingSleep();
    for (const error of [fatal(), new Error('bug')]) {
      let calls = 0;
      await expect(
        withRetry(
          () => {
            calls++;
            return Promise.reject(error);
          },
          options,
          new AbortController().signal,
          sleep,
        ),
      ).rejects.toBe(error);
      expect(calls).toBe(1);
    }
    expect(delays).toEqual([]);
  });

  it('never retries an attempt that has started its output', async () => {
    const { sleep } = recordingSleep();
    let calls = 0;
    await expect(
      withRetry(
        (attempt) => {
          calls++;
          attempt.outputStarted();
          return Promise.reject(retryable());
        },
        options,
        new AbortController().signal,
        sleep,
      ),
    ).rejects.toThrow('HTTP 503');
    expect(calls).toBe(1);
  });

  it('stops with the abort reason during a backoff (real sleep)', async () => {
    const controller = new AbortController();
    let calls = 0;
    const running = withRetry(
      () => {
        calls++;
        setTimeout(() => controller.abort(new Error('hung up')), 10);
        return Promise.reject(retryable());
      },
      { maxAttempts: 5, baseDelayMs: 60_000, maxDelayMs: 60_000, random: () => 0.99 },
      controller.signal,
    );
    await expect(running).rejects.toThrow('hung up');
    expect(calls).toBe(1);
  });

  it('throws the abort reason, not the attempt error, once aborted', async () => {
    const controller = new AbortController();
    const { sleep } = recordingSleep();
    await expect(
      withRetry(
        () => {
          controller.abort(new Error('gone'));
          return Promise.reject(retryable());
        },
        options,
        controller.signal,
        sleep,
      ),
    ).rejects.toThrow('gone');
  });

  it('abortableSleep resolves after the delay and rejects on abort', async () => {
    await expect(abortableSleep(1, new AbortController().signal)).resolves.toBeUndefined();
    const controller = new AbortController();
    controller.abort(new Error('early'));
    await expect(abortableSleep(10_000, controller.signal)).rejects.toThrow('early');
  });
});

describe('retryStream', () => {
  async function* failing(events: string[], error: Error): AsyncGenerator<string> {
    await Promise.resolve();
    yield* events;
    throw error;
  }

  async function* succeeding(events: string[]): AsyncGenerator<string> {
    await Promise.resolve();
    yield* events;
  }

  it('reopens the stream while nothing was yielded', async () => {
    const { sleep, delays } = recordingSleep();
    const seen: string[] = [];
    let opened = 0;
    for await (const event of retryStream(
      (attempt) => {
        opened++;
        expect(attempt).toBe(opened);
        return opened < 3 ? failing([], retryable()) : succeeding(['a', 'b']);
      },
      { ...options, random: () => 0 },
      new AbortController().signal,
      sleep,
    )) {
      seen.push(event);
    }
    expect(opened).toBe(3);
    expect(seen).toEqual(['a', 'b']);
    expect(delays).toEqual([0, 0]);
  });

  it('passes a failure after the first event through without retrying', async () => {
    const { sleep } = recordingSleep();
    const seen: string[] = [];
    let opened = 0;
    const reading = (async () => {
      for await (const event of retryStream(
        () => {
          opened++;
          return failing(['a'], retryable());
        },
        options,
        new AbortController().signal,
        sleep,
      )) {
        seen.push(event);
      }
    })();
    await expect(reading).rejects.toThrow('HTTP 503');
    expect(opened).toBe(1);
    expect(seen).toEqual(['a']);
  });
});
