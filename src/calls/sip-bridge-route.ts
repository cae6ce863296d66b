/**
 * Where a bridged transfer dials: the destination through the call's own trunk (the phone
 * number's `byo-sip-trunk` credential), with the gateways, digest credentials and caller ID an
 * outbound call to that destination would use.
 */
import type { Doc, Resource } from '../store/resource-store.js';
import { parseDtmfDigits, type DtmfStep } from '../transports/rtp/dtmf-sender.js';
import type { Store } from '../store/store.js';
import type { BridgeCallerLeg, SipBridges } from './sip-bridge.js';
import { planOutboundCall, type OutboundPlan } from './sip-outbound-plan.js';
import type { TransferOutcome } from './telephony-leg.js';

/** How long the destination may ring when transferPlan.timeout is unset. */
export const DEFAULT_BRIDGE_RING_TIMEOUT_MS = 30_000;
const MAX_RING_TIMEOUT_S = 600;

/** What names a call's number, as an outbound call does (`phoneNumberId`, or inline). */
export interface NumberOf {
  readonly phoneNumberId?: unknown;
  readonly phoneNumber?: unknown;
}

/** An outbound call's plan (trunk, gateway attempts, caller ID), or why there is none. */
export type BridgeRoute =
  | Extract<OutboundPlan, { ok: true }>
  | { readonly ok: false; readonly code: string; readonly message: string };

/**
 * A SipTelephonyLeg's `bridge` for a call: routes the destination through the number's trunk and
 * bridges the caller (read when the transfer runs: its SDP may have changed since).
 */
export function bridgeThroughTrunk(
  bridges: SipBridges,
  store: Store,
  orgId: string,
  numberOf: NumberOf,
  caller: () => BridgeCallerLeg,
): (destination: Doc) => Promise<TransferOutcome> {
  return async (destination) => {
    const route = await bridgeRoute(store, orgId, numberOf, destination);
    return route.ok ? bridges.bridge(caller(), route, destination) : route;
  };
}

export async function bridgeRoute(
  store: Store,
  orgId: string,
  numberOf: NumberOf,
  destination: Doc,
): Promise<BridgeRoute> {
  let customer: Doc;
  if (destination.type === 'number' && typeof destination.number === 'string') {
    customer = { number: destination.number };
  } else if (destination.type === 'sip' && typeof destination.sipUri === 'string') {
    customer = { sipUri: destination.sipUri };
  } else {
    return {
      ok: false,
      code: 'transfer-not-supported',
      message: 'Only number and sip destinations can be bridged',
    };
  }
  const now = new Date().toISOString();
  // planOutboundCall reads only the number and the customer of the call it is given.
  const call: Resource = {
    id: 'bridge',
    orgId,
    createdAt: now,
    updatedAt: now,
    ...(numberOf.phoneNumberId !== undefined && { phoneNumberId: numberOf.phoneNumberId }),
    ...(numberOf.phoneNumber !== undefined && { phoneNumber: numberOf.phoneNumber }),
    customer,
  };
  const plan = await planOutboundCall(store, orgId, call);
  if (!plan.ok) {
    return {
      ok: false,
      code: 'transfer-failed',
      message: `The call's trunk cannot dial the destination: ${plan.message}`,
    };
  }
  return { ok: true, trunk: plan.trunk, attempts: plan.attempts, from: plan.from };
}

/**
 * A number destination's extension as the steps to key once it answers: a 1 s pause for the far
 * end to listen, then the extension's keys and `w`/`W` pauses (as an outbound call keys
 * `customer.extension`). Undefined without one.
 */
export function extensionSteps(
  destination: Doc,
): readonly DtmfStep[] | { message: string } | undefined {
  const extension = destination.type === 'number' ? destination.extension : undefined;
  if (extension === undefined || extension === '') {
    return undefined;
  }
  const parsed =
    typeof extension === 'string' && extension.length <= 10
      ? parseDtmfDigits(`W${extension}`)
      : undefined;
  return parsed?.ok === true
    ? parsed.steps
    : { message: 'destination.extension must be 1-10 of 0-9, *, #, w and W' };
}

/** transferPlan.timeout (seconds) bounds the ringing, as it bounds a REFER's outcome. */
export function ringTimeoutOf(destination: Doc): number {
  const plan = destination.transferPlan;
  const timeout = plan !== null && typeof plan === 'object' ? (plan as Doc).timeout : undefined;
  return typeof timeout === 'number' && timeout > 0
    ? Math.min(timeout, MAX_RING_TIMEOUT_S) * 1000
    : DEFAULT_BRIDGE_RING_TIMEOUT_MS;
}
