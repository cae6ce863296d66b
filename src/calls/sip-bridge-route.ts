/**
 * Where a bridged transfer dials: the destination through the call's own trunk (the phone
 * number's `byo-sip-trunk` credential), with the gateways, digest credentials and caller ID an
 * outbound call to that destination would use.
 */
import type { Doc, Resource } from '../store/resource-store.js';
import type { Store } from '../store/store.js';
import type { BridgeCallerLeg, SipBridges } from './sip-bridge.js';
import { planOutboundCall, type OutboundAttempt } from './sip-outbound-plan.js';
import type { OutboundTrunk } from './sip-outbound-trunk.js';
import type { TransferOutcome } from './telephony-leg.js';

/** What names a call's number, as an outbound call does (`phoneNumberId`, or inline). */
export interface NumberOf {
  readonly phoneNumberId?: unknown;
  readonly phoneNumber?: unknown;
}

export type BridgeRoute =
  | {
      readonly ok: true;
      readonly trunk: OutboundTrunk;
      readonly attempts: readonly OutboundAttempt[];
      readonly from: string;
    }
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
