import { ParlaError } from '../core/errors.js';

/**
 * A vendor failed. `vendorStatus` is the vendor's HTTP status when there was one; `retryable`
 * follows the usual rule (408, 429 and 5xx retry; other 4xx do not).
 */
export class ProviderError extends ParlaError {
  readonly provider: string;
  readonly vendorStatus: number | null;
  readonly retryable: boolean;

  constructor(
    provider: string,
    message: string,
    vendorStatus: number | null,
    options?: { cause?: unknown; timeout?: boolean },
  ) {
    super(
      options?.timeout === true ? 'ERR_PROVIDER_TIMEOUT' : 'ERR_PROVIDER',
      `${provider}: ${message}`,
      options,
    );
    this.name = 'ProviderError';
    this.provider = provider;
    this.vendorStatus = vendorStatus;
    this.retryable =
      vendorStatus === null || vendorStatus === 408 || vendorStatus === 429 || vendorStatus >= 500;
  }
}
