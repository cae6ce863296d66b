import type { ProviderError } from './provider-error.js';

export type ProviderKind = 'model' | 'voice' | 'transcriber';

/**
 * `*.provider` values whose spelling in ended reasons differs from the value itself (the
 * platform writes `eleven-labs` in `pipeline-error-eleven-labs-voice-failed` for the `11labs`
 * voice provider). Every other value is used as is (lower-cased, runs of characters other than
 * letters and digits turned into `-`): `openai`, `anthropic`, `custom-llm`, `deep-seek`,
 * `deepgram`, `assembly-ai`, `rime-ai`, `cartesia`, …
 */
const VENDOR_SPELLINGS: Record<string, string> = {
  '11labs': 'eleven-labs',
  elevenlabs: 'eleven-labs',
};

/**
 * Model failures by vendor HTTP status. Vendor-side 5xx are the vendor's fault
 * (`call.in-progress.error-providerfault-…`); 529 (Anthropic's "overloaded") counts as 503.
 */
const MODEL_SUFFIXES: Record<number, string> = {
  400: '400-bad-request-validation-failed',
  401: '401-unauthorized',
  403: '403-model-access-denied',
  429: '429-exceeded-quota',
};

/** The vendor's name as it appears in ended reasons. */
export function endedReasonVendor(provider: string): string {
  const normalized = provider
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return VENDOR_SPELLINGS[normalized] ?? (normalized === '' ? 'unknown' : normalized);
}

/**
 * The call's `endedReason` when a vendor fails during the pipeline:
 *
 * | kind        | vendor status          | ended reason                                                     |
 * |-------------|------------------------|------------------------------------------------------------------|
 * | model       | 400                    | `pipeline-error-<vendor>-400-bad-request-validation-failed`      |
 * | model       | 401                    | `pipeline-error-<vendor>-401-unauthorized`                       |
 * | model       | 403                    | `pipeline-error-<vendor>-403-model-access-denied`                |
 * | model       | 429                    | `pipeline-error-<vendor>-429-exceeded-quota`                     |
 * | model       | 503, 529               | `call.in-progress.error-providerfault-<vendor>-503-server-overloaded-error` |
 * | model       | other 5xx              | `call.in-progress.error-providerfault-<vendor>-500-server-error`  |
 * | model       | none, other 4xx, 2xx   | `pipeline-error-<vendor>-llm-failed`                             |
 * | voice       | any                    | `pipeline-error-<vendor>-voice-failed`                           |
 * | transcriber | any                    | `pipeline-error-<vendor>-transcriber-failed`                     |
 *
 * "none" covers timeouts, connection failures and truncated streams; "2xx" a malformed stream.
 */
export function endedReasonForProviderError(
  kind: ProviderKind,
  provider: string,
  error: ProviderError,
): string {
  const vendor = endedReasonVendor(provider);
  if (kind === 'voice') {
    return `pipeline-error-${vendor}-voice-failed`;
  }
  if (kind === 'transcriber') {
    return `pipeline-error-${vendor}-transcriber-failed`;
  }
  const status = error.vendorStatus;
  if (status !== null && status >= 500 && status <= 599) {
    const suffix =
      status === 503 || status === 529 ? '503-server-overloaded-error' : '500-server-error';
    return `call.in-progress.error-providerfault-${vendor}-${suffix}`;
  }
  const suffix = status === null ? undefined : MODEL_SUFFIXES[status];
  return `pipeline-error-${vendor}-${suffix ?? 'llm-failed'}`;
}
