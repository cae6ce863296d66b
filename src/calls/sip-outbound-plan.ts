/**
 * The plan of an outbound call before it dials: the number and its trunk (a stored or transient
 * `byo-phone-number` on a `byo-sip-trunk` credential), the Request-URI and From, and how a failed
 * INVITE maps to an endedReason.
 */
import type { Doc, Resource } from '../store/resource-store.js';
import type { Store } from '../store/store.js';
import type { SipRequestTarget } from '../transports/sip/transaction-layer.js';
import type { DialResult } from './sip-outbound-dial.js';
import { dialledUser, resolveTrunk, type OutboundTrunk } from './sip-outbound-trunk.js';

export const ENDED_REASON_BUSY = 'customer-busy';
export const ENDED_REASON_NO_ANSWER = 'customer-did-not-answer';
/** The trunk refused or failed the INVITE (403, 404, 5xx, bad credentials, no answer SDP…). */
export const ENDED_REASON_FAILED = 'call.in-progress.error-sip-outbound-call-failed-to-connect';
export const ENDED_REASON_RTP_TIMEOUT = 'call.in-progress.error-sip-rtp-timeout';
export const ENDED_REASON_PHONE_NUMBER = 'call.start.error-get-phone-number';
export const ENDED_REASON_TRANSPORT = 'call.start.error-get-transport';

export interface OutboundAttempt {
  /** Where the INVITE goes: the gateway, or the trunk's outbound proxy. */
  readonly target: SipRequestTarget;
  readonly requestUri: string;
  /** The outbound proxy's Route value (its address is `target`), when the trunk has one. */
  readonly outboundProxy?: string;
}

export type OutboundPlan =
  | {
      readonly ok: true;
      readonly trunk: OutboundTrunk;
      /** One per outbound gateway, in the order they are tried. */
      readonly attempts: readonly OutboundAttempt[];
      /** Our identity: the number as caller ID at the trunk's (or registration's) domain. */
      readonly from: string;
    }
  | { readonly ok: false; readonly endedReason: string; readonly message: string };

export async function planOutboundCall(
  store: Store,
  orgId: string,
  call: Resource,
): Promise<OutboundPlan> {
  // A stored number, or a transient one given inline as `phoneNumber`.
  const phoneNumber =
    typeof call.phoneNumberId === 'string'
      ? await store.resources.phoneNumbers.get(orgId, call.phoneNumberId)
      : ((call.phoneNumber as Doc | undefined) ?? null);
  if (phoneNumber === null || phoneNumber.provider !== 'byo-phone-number') {
    return {
      ok: false,
      endedReason: ENDED_REASON_PHONE_NUMBER,
      message:
        'Outbound calls need a byo-phone-number (phoneNumberId) on a byo-sip-trunk credential',
    };
  }
  const credentialId = typeof phoneNumber.credentialId === 'string' ? phoneNumber.credentialId : '';
  const credential = await store.resources.credentials.getInternal(orgId, credentialId);
  if (credential === null || credential.provider !== 'byo-sip-trunk') {
    return {
      ok: false,
      endedReason: ENDED_REASON_PHONE_NUMBER,
      message: 'The phone number has no byo-sip-trunk credential',
    };
  }
  const resolved = await resolveTrunk(credential);
  if (!resolved.ok) {
    return { ok: false, endedReason: ENDED_REASON_TRANSPORT, message: resolved.message };
  }
  const { trunk } = resolved;
  const attempts = outboundAttempts(trunk, (call.customer ?? {}) as Doc);
  const caller = typeof phoneNumber.number === 'string' ? phoneNumber.number : 'parla';
  const from = `<sip:${dialledUser(caller, trunk.leadingPlus)}@${trunk.register?.domain ?? trunk.host}>`;
  return { ok: true, trunk, attempts, from };
}

/**
 * One INVITE per outbound gateway, in order. A SIP URI goes to the trunk as it is; a number
 * becomes a user at the gateway. With an outbound proxy every attempt goes through it, each
 * naming its own gateway.
 */
export function outboundAttempts(trunk: OutboundTrunk, customer: Doc): OutboundAttempt[] {
  const number = typeof customer.number === 'string' ? customer.number : '';
  const proxy = trunk.outboundProxy;
  return trunk.gateways.map((gateway) => ({
    target: proxy?.target ?? gateway.target,
    ...(proxy !== undefined && { outboundProxy: proxy.route }),
    requestUri:
      typeof customer.sipUri === 'string'
        ? customer.sipUri
        : `sip:${dialledUser(number, trunk.leadingPlus)}@${gateway.host}:${gateway.port}`,
  }));
}

/** Why a failed INVITE ended the call (RFC 3261 §21 classes). */
export function failureReason(result: DialResult, ringTimedOut: boolean, rang: boolean): string {
  if (result.ok) {
    return ENDED_REASON_FAILED;
  }
  const { status } = result;
  if (status === 486 || status === 600 || status === 603) {
    return ENDED_REASON_BUSY;
  }
  // A ring timeout or 408 before any 180/183 means the trunk never reached the phone.
  if (status === 480 || ((ringTimedOut || status === 487 || status === 408) && rang)) {
    return ENDED_REASON_NO_ANSWER;
  }
  return ENDED_REASON_FAILED;
}

/**
 * Whether a failure at one gateway is worth trying the next one for (RFC 3263 §4.3): the
 * gateway itself failed (5xx, a timeout, a transport error) before the phone rang.
 */
export function shouldTryNextGateway(result: DialResult, rang: boolean): boolean {
  return (
    !result.ok && !rang && (result.status === 408 || (result.status >= 500 && result.status < 600))
  );
}

export function failureMessage(result: DialResult, ringTimedOut: boolean): string {
  if (result.ok) {
    return '';
  }
  if (ringTimedOut && result.status === 487) {
    return 'The customer did not answer before the ring timeout';
  }
  const phrase =
    result.response?.reason ??
    (result.status === 408 ? 'no answer from the trunk' : 'transport error');
  const auth = result.authFailed === true ? ' (digest authentication failed)' : '';
  return `The SIP trunk answered ${result.status} ${phrase}${auth}`;
}
