/**
 * Sends an outbound INVITE and, when the trunk challenges it (401 with WWW-Authenticate, 407
 * with Proxy-Authenticate), sends it again with digest credentials: same Call-ID and From tag,
 * CSeq one higher (RFC 3261 §22.2). A second challenge for fresh credentials means they are
 * wrong; only a `stale` nonce earns another try. A 422 (RFC 4028 §7.4: our Session-Expires is
 * below the peer's Min-SE) is retried once the same way, asking for the Min-SE it named.
 */
import type {
  OutgoingInvite,
  OutgoingInviteOptions,
  OutgoingInviteResult,
} from '../transports/sip/dialog-uac.js';
import { buildDigestAuthorization, pickDigestChallenge } from '../transports/sip/digest.js';
import { getCSeq, getCallId, getFromTag, type SipResponse } from '../transports/sip/message.js';
import { parseDigits } from '../transports/sip/syntax.js';
import type { DigestUser } from './sip-outbound-trunk.js';

/** Challenges answered for one call at most (the first, and one more for a stale nonce). */
const MAX_CHALLENGES = 3;
/** The largest delta-seconds RFC 4028 allows. */
const MAX_SESSION_EXPIRES_S = 2 ** 31 - 1;

export type InviteSender = (
  options: OutgoingInviteOptions,
  onProgress?: (response: SipResponse) => void,
) => OutgoingInvite;

export type DialResult = OutgoingInviteResult & {
  /** True when the final failure is a challenge we could not (or no longer) answer. */
  readonly authFailed?: boolean;
};

export interface Dial {
  readonly result: Promise<DialResult>;
  /** CANCELs the INVITE in flight and sends no retry. */
  cancel(): void;
  /** The Call-ID of the dial (the same for every attempt). */
  readonly callId: string;
}

export function dialWithDigest(
  send: InviteSender,
  options: OutgoingInviteOptions,
  auth: DigestUser | undefined,
  onProgress: (response: SipResponse) => void,
): Dial {
  let cancelled = false;
  let current = send(options, onProgress);
  const callId = getCallId(current.request) ?? '';
  // One answer per header kind (a proxy's 407 and then the trunk's 401 both get theirs).
  const answers = new Map<string, { value: string; count: number }>();
  let sessionTimer = options.sessionTimer;
  const resend = (): void => {
    const previous = current.request;
    current = send(
      {
        ...options,
        headers: [
          ...(options.headers ?? []),
          ...[...answers].map(([name, answer]) => [name, answer.value] as const),
        ],
        ...(sessionTimer !== undefined && { sessionTimer }),
        retryOf: {
          callId,
          localTag: getFromTag(previous) ?? '',
          seq: (getCSeq(previous)?.seq ?? 1) + 1,
        },
      },
      onProgress,
    );
  };
  const run = async (): Promise<DialResult> => {
    for (;;) {
      const result = await current.result;
      if (!result.ok && result.status === 422 && sessionTimer === options.sessionTimer) {
        const minSe = result.response?.headers.get('Min-SE')?.split(';')[0]?.trim() ?? '';
        const minSeconds = parseDigits(minSe, MAX_SESSION_EXPIRES_S);
        if (minSeconds !== null && !cancelled) {
          sessionTimer = { expiresSeconds: minSeconds, minSeconds };
          resend();
          continue;
        }
      }
      if (result.ok || (result.status !== 401 && result.status !== 407)) {
        return result;
      }
      const header = result.status === 407 ? 'Proxy-Authorization' : 'Authorization';
      const challenge = pickDigestChallenge(
        result.response?.headers.getAll(
          result.status === 407 ? 'Proxy-Authenticate' : 'WWW-Authenticate',
        ) ?? [],
      );
      const count = (answers.get(header)?.count ?? 0) + 1;
      const answerable =
        challenge !== null &&
        auth !== undefined &&
        (auth.realm === undefined || auth.realm === challenge.realm) &&
        (count === 1 || (challenge.stale && count < MAX_CHALLENGES));
      if (!answerable || cancelled) {
        return { ...result, authFailed: true };
      }
      answers.set(header, {
        count,
        value: buildDigestAuthorization(challenge, {
          method: 'INVITE',
          uri: options.requestUri,
          username: auth.username,
          password: auth.password,
        }),
      });
      resend();
    }
  };
  return {
    callId,
    result: run(),
    cancel: () => {
      cancelled = true;
      current.cancel();
    },
  };
}

export interface GatewayAttempt {
  readonly send: InviteSender;
  readonly invite: OutgoingInviteOptions;
  readonly auth?: DigestUser;
  /** After this long without an answer the INVITE is cancelled. */
  readonly ringTimeoutMs: number;
  /** Resolves when the call ended on our side: a pending INVITE is cancelled. */
  readonly ended: Promise<void>;
  /** The first 180/183 (or other 1xx beyond 100). */
  readonly onRinging: () => void;
  /** Every 1xx beyond 100 (a 183 may carry early media SDP). */
  readonly onProvisional?: (response: SipResponse) => void;
}

export interface GatewayOutcome {
  readonly result: DialResult;
  readonly rang: boolean;
  /** Our ring timeout cancelled the INVITE. */
  readonly ringTimedOut: boolean;
}

/** One INVITE (with its digest retries) to one gateway, cancelled on the ring timeout. */
export async function dialGateway(attempt: GatewayAttempt): Promise<GatewayOutcome> {
  let rang = false;
  let ringTimedOut = false;
  let settled = false;
  const dial = dialWithDigest(attempt.send, attempt.invite, attempt.auth, (response) => {
    if (response.status === 100) {
      return;
    }
    if (!rang) {
      rang = true;
      attempt.onRinging();
    }
    attempt.onProvisional?.(response);
  });
  const ringTimer = setTimeout(() => {
    ringTimedOut = true;
    dial.cancel();
  }, attempt.ringTimeoutMs);
  ringTimer.unref();
  void attempt.ended.then(() => {
    if (!settled) {
      dial.cancel();
    }
  });
  const result = await dial.result.finally(() => {
    settled = true;
    clearTimeout(ringTimer);
  });
  return { result, rang, ringTimedOut };
}
