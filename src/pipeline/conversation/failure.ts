import {
  endedReasonForProviderError,
  endedReasonVendor,
  type ProviderKind,
} from '../../providers/ended-reason.js';
import type { ProviderError } from '../../providers/provider-error.js';

function isProviderErrorLike(error: unknown): error is ProviderError {
  if (typeof error !== 'object' || error === null || !('vendorStatus' in error)) {
    return false;
  }
  const status = error.vendorStatus;
  return status === null || typeof status === 'number';
}

/**
 * The call's endedReason when a provider fails: the vendor's HTTP status decides for a
 * ProviderError (providers/ended-reason.ts); anything else thrown counts as a failure without a
 * status (`pipeline-error-<vendor>-llm-failed`, `-voice-failed`, `-transcriber-failed`).
 */
export function endedReasonForFailure(
  kind: ProviderKind,
  provider: string,
  error: unknown,
): string {
  if (isProviderErrorLike(error)) {
    return endedReasonForProviderError(kind, provider, error);
  }
  const vendor = endedReasonVendor(provider);
  switch (kind) {
    case 'model':
      return `pipeline-error-${vendor}-llm-failed`;
    case 'voice':
      return `pipeline-error-${vendor}-voice-failed`;
    case 'transcriber':
      return `pipeline-error-${vendor}-transcriber-failed`;
  }
}
