import { expect } from 'vitest';
import { ProviderError } from '../../../src/providers/provider-error.js';
import type {
  TranscriberEvent,
  TranscriberOpenOptions,
} from '../../../src/providers/stt/transcriber.js';

/** Open options that collect events into `events`. */
export function collector(
  config: Record<string, unknown>,
  extra: Partial<Omit<TranscriberOpenOptions, 'onEvent'>> = {},
): { events: TranscriberEvent[]; options: TranscriberOpenOptions } {
  const events: TranscriberEvent[] = [];
  return {
    events,
    options: {
      sampleRateHz: 16000,
      config,
      apiKey: null,
      ...extra,
      onEvent: (event) => events.push(event),
    },
  };
}

/** `count` samples, each `value` (identifiable on the far side). */
export function tone(count: number, value: number): Int16Array {
  return new Int16Array(count).fill(value);
}

export async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}
