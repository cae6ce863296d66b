import type { SipRequest } from './message.js';
import { parseDigits } from './syntax.js';
import type { TimerHandle, TimerScheduler } from './timers.js';

/**
 * Session timers (RFC 4028) on the UAS side: negotiating Session-Expires and Min-SE for an
 * incoming INVITE, and a timer that asks for a refresh at half the interval (when we are the
 * refresher) or declares the session dead shortly before it expires (when the peer is).
 */

export type SessionRefresher = 'uac' | 'uas';

export interface SessionExpires {
  deltaSeconds: number;
  refresher?: SessionRefresher;
}

/** RFC 4028 §4: Min-SE is at least 90 s. */
export const MIN_SESSION_EXPIRES_S = 90;
const MAX_DELTA_S = 2 ** 31 - 1;

/** `Session-Expires: 1800;refresher=uac` (compact form `x` is mapped by the parser). */
export function parseSessionExpires(value: string): SessionExpires | null {
  const [delta, ...params] = value.split(';').map((part) => part.trim());
  const deltaSeconds = parseDigits(delta ?? '', MAX_DELTA_S);
  if (deltaSeconds === null) {
    return null;
  }
  const result: SessionExpires = { deltaSeconds };
  for (const param of params) {
    const [name, paramValue] = param.split('=').map((part) => part.trim().toLowerCase());
    if (name === 'refresher') {
      if (paramValue !== 'uac' && paramValue !== 'uas') {
        return null;
      }
      result.refresher = paramValue;
    }
  }
  return result;
}

export function formatSessionExpires(expires: SessionExpires): string {
  return expires.refresher === undefined
    ? `${expires.deltaSeconds}`
    : `${expires.deltaSeconds};refresher=${expires.refresher}`;
}

function supportsTimer(request: SipRequest): boolean {
  return request.headers
    .getAll('Supported')
    .some((option) => option.trim().toLowerCase() === 'timer');
}

export interface SessionTimerPolicy {
  /** Our Min-SE. Default 90 s. */
  readonly minSeconds?: number;
  /** The interval we propose when the peer supports timers but asked for none. Default 1800 s. */
  readonly defaultSeconds?: number;
}

export type SessionTimerDecision =
  /** No session timer for this dialog. */
  | { kind: 'none' }
  /** Answer 422 with these header fields (§5: Session-Expires below our Min-SE). */
  | { kind: 'reject'; status: 422; headers: [string, string][] }
  /** Run a timer; add `headers` to the 2xx. */
  | {
      kind: 'timer';
      intervalSeconds: number;
      refresher: SessionRefresher;
      headers: [string, string][];
    };

/**
 * The UAS decision for an incoming (re-)INVITE or UPDATE (§9). A malformed Session-Expires
 * is treated as absent (the request is otherwise fine).
 */
export function negotiateUasSessionTimer(
  request: SipRequest,
  policy: SessionTimerPolicy = {},
): SessionTimerDecision {
  const ourMin = Math.max(MIN_SESSION_EXPIRES_S, policy.minSeconds ?? MIN_SESSION_EXPIRES_S);
  const headerValue = request.headers.get('Session-Expires');
  const requested = headerValue === undefined ? null : parseSessionExpires(headerValue);
  const peerSupports = supportsTimer(request);
  const theirMin = parseDigits(
    request.headers.get('Min-SE')?.split(';')[0]?.trim() ?? '',
    MAX_DELTA_S,
  );
  const floor = Math.max(ourMin, theirMin ?? 0);
  if (requested === null) {
    if (!peerSupports) {
      return { kind: 'none' };
    }
    // §9: the UAS may add a Session-Expires the peer did not ask for, when it supports timers.
    const intervalSeconds = Math.max(floor, policy.defaultSeconds ?? 1800);
    return timer(intervalSeconds, 'uac', true);
  }
  if (requested.deltaSeconds < ourMin) {
    return { kind: 'reject', status: 422, headers: [['Min-SE', `${ourMin}`]] };
  }
  // The peer's refresher choice stands; without one, let the peer refresh when it can.
  const refresher: SessionRefresher = requested.refresher ?? (peerSupports ? 'uac' : 'uas');
  return timer(requested.deltaSeconds, peerSupports ? refresher : 'uas', peerSupports);
}

function timer(
  intervalSeconds: number,
  refresher: SessionRefresher,
  peerSupports: boolean,
): SessionTimerDecision {
  const headers: [string, string][] = [
    ['Session-Expires', formatSessionExpires({ deltaSeconds: intervalSeconds, refresher })],
  ];
  if (peerSupports) {
    // §9: Require: timer only when the UAC said it supports the extension.
    headers.push(['Require', 'timer']);
  }
  return { kind: 'timer', intervalSeconds, refresher, headers };
}

/**
 * Runs one dialog's session timer. The refresher refreshes at half the interval (§10); the
 * other side sends a BYE when no refresh came by the interval minus min(32 s, interval/3)
 * (§10). Call `refreshed` whenever a refresh succeeds (either direction).
 */
export class SessionTimer {
  private handle: TimerHandle | undefined;

  constructor(
    private readonly scheduler: TimerScheduler,
    private readonly handlers: { onRefreshDue: () => void; onExpired: () => void },
    public intervalSeconds: number,
    public weRefresh: boolean,
  ) {}

  start(): void {
    this.stop();
    const intervalMs = this.intervalSeconds * 1000;
    if (this.weRefresh) {
      this.handle = this.scheduler.set(intervalMs / 2, () => {
        this.handle = undefined;
        this.handlers.onRefreshDue();
      });
    } else {
      const marginMs = Math.min(32_000, intervalMs / 3);
      this.handle = this.scheduler.set(intervalMs - marginMs, () => {
        this.handle = undefined;
        this.handlers.onExpired();
      });
    }
  }

  /** A refresh went through: start the interval again (with new terms if they changed). */
  refreshed(intervalSeconds = this.intervalSeconds, weRefresh = this.weRefresh): void {
    this.intervalSeconds = intervalSeconds;
    this.weRefresh = weRefresh;
    this.start();
  }

  stop(): void {
    if (this.handle !== undefined) {
      this.scheduler.clear(this.handle);
      this.handle = undefined;
    }
  }
}
