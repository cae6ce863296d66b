import { randomBytes } from 'node:crypto';
import { buildDigestAuthorization, pickDigestChallenge } from './digest.js';
import { SipHeaders } from './headers.js';
import type { SipRequest, SipResponse } from './message.js';
import { newTag, parseNameAddr } from './name-addr.js';
import { isSipUri, parseUri, type AnyUri } from './uri.js';
import { SystemTimerScheduler, type TimerHandle, type TimerScheduler } from './timers.js';
import type { SipRequestTarget, SipTransactionLayer } from './transaction-layer.js';

export type SipRegistrationState = 'idle' | 'registering' | 'registered' | 'failed' | 'closed';

export interface SipRegistrationOptions {
  readonly transactions: SipTransactionLayer;
  /** Where REGISTERs go: the registrar (or the trunk's gateway, or its outbound proxy). */
  readonly target: SipRequestTarget;
  /** A preloaded Route (the outbound proxy's `<sip:…;lr>`, RFC 3261 §8.1.2). */
  readonly route?: string;
  /** The registrar's domain: the Request-URI is `sip:<domain>` (§10.2). */
  readonly domain: string;
  /** The user part of the address-of-record `sip:<user>@<domain>`. */
  readonly user: string;
  /** Our Contact URI, without angle brackets: where the trunk sends calls for the AOR. */
  readonly contactUri: string;
  readonly auth?: { readonly username: string; readonly password: string; readonly realm?: string };
  /** Asked for in Expires; the registrar may grant less. Default 3600 s. */
  readonly expiresSeconds?: number;
  /** First retry after a failure, doubled each time up to maxRetryMs. Default 30 s. */
  readonly retryBaseMs?: number;
  /** Default 30 minutes. */
  readonly maxRetryMs?: number;
  readonly scheduler?: TimerScheduler;
  readonly onStateChange?: (state: SipRegistrationState, detail: string) => void;
}

const DEFAULT_EXPIRES_S = 3600;
/** Challenges answered in a row without a 2xx between them (the first, and a stale nonce). */
const MAX_CHALLENGES = 2;

/**
 * One registration binding (RFC 3261 §10): REGISTER with our Contact, digest answers to 401 and
 * 407, Min-Expires honoured after a 423, a refresh before the granted expiry, exponential
 * back-off after failures, and an unREGISTER (Expires: 0) on close. The Call-ID stays the same
 * for the binding's life and the CSeq goes up by one per request (§10.2).
 */
export class SipRegistration {
  state: SipRegistrationState = 'idle';
  /** The expiry the registrar granted last, in seconds. */
  grantedSeconds: number | undefined;
  private readonly callId = `${randomBytes(12).toString('hex')}@parla`;
  private readonly fromTag = newTag();
  private seq = 0;
  private expiresSeconds: number;
  private readonly scheduler: TimerScheduler;
  private timer: TimerHandle | undefined;
  private failures = 0;
  private challenges = 0;
  /** The Authorization (or Proxy-) header answering the last challenge, reused on refreshes. */
  private authorization: [string, string] | undefined;

  constructor(private readonly options: SipRegistrationOptions) {
    this.expiresSeconds = options.expiresSeconds ?? DEFAULT_EXPIRES_S;
    this.scheduler = options.scheduler ?? new SystemTimerScheduler();
  }

  get aor(): string {
    return `sip:${this.options.user}@${this.options.domain}`;
  }

  start(): void {
    if (this.state === 'idle') {
      this.send();
    }
  }

  /** Stops refreshing and removes the binding; resolves with the registrar's answer (if any). */
  async close(): Promise<void> {
    if (this.state === 'closed') {
      return;
    }
    const wasRegistered = this.state === 'registered' || this.grantedSeconds !== undefined;
    this.setState('closed', 'closed');
    this.clearTimer();
    if (wasRegistered) {
      await new Promise<void>((resolve) => {
        this.transmit(0, () => resolve());
      });
    }
  }

  private send(): void {
    this.setState('registering', `REGISTER ${this.aor}`);
    this.transmit(this.expiresSeconds, (response) => this.onFinal(response));
  }

  /** Sends one REGISTER; `onFinal` gets the final response (undefined on timeout or error). */
  private transmit(expires: number, onFinal: (response: SipResponse | undefined) => void): void {
    let done = false;
    const finish = (response: SipResponse | undefined): void => {
      if (!done) {
        done = true;
        onFinal(response);
      }
    };
    try {
      this.options.transactions.sendRequest(this.request(expires), this.options.target, {
        onResponse: (response) => {
          if (response.status >= 200) {
            finish(response);
          }
        },
        onTimeout: () => finish(undefined),
        onTransportError: () => finish(undefined),
      });
    } catch {
      finish(undefined); // the transport is closed
    }
  }

  private request(expires: number): SipRequest {
    this.seq++;
    const { domain } = this.options;
    const headers = new SipHeaders();
    if (this.options.route !== undefined) {
      headers.append('Route', this.options.route);
    }
    headers
      .append('Max-Forwards', '70')
      .append('From', `<${this.aor}>;tag=${this.fromTag}`)
      .append('To', `<${this.aor}>`)
      .append('Call-ID', this.callId)
      .append('CSeq', `${this.seq} REGISTER`)
      .append('Contact', `<${this.options.contactUri}>`)
      .append('Expires', String(expires));
    if (this.authorization !== undefined) {
      headers.append(...this.authorization);
    }
    return {
      kind: 'request',
      method: 'REGISTER',
      uri: `sip:${domain}`,
      headers,
      body: Buffer.alloc(0),
    };
  }

  private onFinal(response: SipResponse | undefined): void {
    if (this.state === 'closed') {
      return;
    }
    if (response === undefined) {
      this.fail('no answer from the registrar');
      return;
    }
    const { status } = response;
    if (status >= 200 && status < 300) {
      this.challenges = 0;
      this.failures = 0;
      const granted = grantedExpiry(response, this.options.contactUri) ?? this.expiresSeconds;
      this.grantedSeconds = granted;
      this.setState('registered', `registered for ${granted} s`);
      this.schedule(refreshDelayMs(granted), () => this.send());
      return;
    }
    if ((status === 401 || status === 407) && this.answer(response)) {
      this.send();
      return;
    }
    const minExpires = Number(response.headers.get('Min-Expires'));
    if (status === 423 && Number.isInteger(minExpires) && minExpires > this.expiresSeconds) {
      this.expiresSeconds = minExpires;
      this.send();
      return;
    }
    this.fail(`the registrar answered ${status} ${response.reason}`);
  }

  /** Builds the answer to a challenge; false when it cannot (or should not) be answered. */
  private answer(response: SipResponse): boolean {
    const proxy = response.status === 407;
    const challenge = pickDigestChallenge(
      response.headers.getAll(proxy ? 'Proxy-Authenticate' : 'WWW-Authenticate'),
    );
    const auth = this.options.auth;
    this.challenges++;
    if (
      challenge === null ||
      auth === undefined ||
      (auth.realm !== undefined && auth.realm !== challenge.realm) ||
      (this.challenges > 1 && !challenge.stale) ||
      this.challenges > MAX_CHALLENGES
    ) {
      return false;
    }
    const value = buildDigestAuthorization(challenge, {
      method: 'REGISTER',
      uri: `sip:${this.options.domain}`,
      username: auth.username,
      password: auth.password,
    });
    this.authorization = [proxy ? 'Proxy-Authorization' : 'Authorization', value];
    return true;
  }

  private fail(detail: string): void {
    this.failures++;
    this.challenges = 0;
    this.authorization = undefined;
    const base = this.options.retryBaseMs ?? 30_000;
    const max = this.options.maxRetryMs ?? 30 * 60_000;
    const delayMs = Math.min(max, base * 2 ** Math.min(this.failures - 1, 16));
    this.setState('failed', `${detail}; retrying in ${Math.round(delayMs / 1000)} s`);
    this.schedule(delayMs, () => this.send());
  }

  private schedule(delayMs: number, run: () => void): void {
    this.clearTimer();
    this.timer = this.scheduler.set(delayMs, () => {
      this.timer = undefined;
      if (this.state !== 'closed') {
        run();
      }
    });
  }

  private clearTimer(): void {
    if (this.timer !== undefined) {
      this.scheduler.clear(this.timer);
      this.timer = undefined;
    }
  }

  private setState(state: SipRegistrationState, detail: string): void {
    this.state = state;
    this.options.onStateChange?.(state, detail);
  }
}

/** Refresh well before the expiry: 30 s early for long bindings, halfway for short ones. */
export function refreshDelayMs(grantedSeconds: number): number {
  const seconds = grantedSeconds > 60 ? grantedSeconds - 30 : grantedSeconds / 2;
  return Math.max(1000, seconds * 1000);
}

/**
 * The expiry of our binding in a 2xx (§10.2.4): the `expires` param of the Contact matching
 * ours, else the Expires header.
 */
export function grantedExpiry(response: SipResponse, contactUri: string): number | undefined {
  for (const value of response.headers.getAll('Contact')) {
    const contact = parseNameAddr(value);
    const expires = contact?.params.get('expires');
    if (contact !== null && expires != null && sameUri(contact.uri, contactUri)) {
      const seconds = Number(expires);
      if (Number.isInteger(seconds) && seconds >= 0) {
        return seconds;
      }
    }
  }
  const header = Number(response.headers.get('Expires') ?? NaN);
  return Number.isInteger(header) && header >= 0 ? header : undefined;
}

/** User, host and port equal (registrars often add or drop URI parameters). */
function sameUri(a: AnyUri, text: string): boolean {
  const b = parseUri(text);
  if (b === null || !isSipUri(a) || !isSipUri(b)) {
    return false;
  }
  return (
    a.user === b.user &&
    a.host.toLowerCase() === b.host.toLowerCase() &&
    (a.port ?? 5060) === (b.port ?? 5060)
  );
}
