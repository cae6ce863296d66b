/**
 * What an answered SIP call gets the same way inbound and outbound: its keypad (digits become
 * the customer's messages per `keypadInputPlan`) and its telephone leg (REFER transfers, DTMF
 * out, and the bridge through the call's trunk when a REFER is refused).
 */
import type { Store } from '../store/store.js';
import type { RtpSessionOptions } from '../transports/rtp/rtp-session.js';
import type { SipDialog } from '../transports/sip/dialog.js';
import type { CallSession } from './call-session.js';
import { bridgeThroughTrunk, type NumberOf } from './sip-bridge-route.js';
import type { SipBridges } from './sip-bridge.js';
import { KeypadInput, keypadInputPlanOf } from './sip-keypad-input.js';
import type { LiveSipCall } from './sip-live-calls.js';
import { SipTelephonyLeg, type SipTelephonyLegOptions } from './sip-telephony-leg.js';

export function keypadFor(
  session: CallSession,
  assistant: Readonly<Record<string, unknown>>,
): KeypadInput {
  return new KeypadInput(keypadInputPlanOf(assistant), (digits) => {
    session.control({
      type: 'add-message',
      message: { role: 'user', content: digits },
      triggerResponseEnabled: true,
    });
  });
}

/** The trunk a refused REFER is bridged through; without it no bridge is offered. */
export interface BridgeTrunk {
  readonly bridges: SipBridges | undefined;
  readonly store: Store;
  readonly orgId: string;
  readonly numberOf: NumberOf;
}

/**
 * The call's telephone leg. `release` lets the call layer drop the dialog once a bridge owns it
 * (the live call is read when a transfer runs: its SDP may have changed since).
 */
export function telephonyLegFor(
  agent: SipTelephonyLegOptions['agent'],
  dialog: SipDialog,
  live: LiveSipCall,
  trunk: BridgeTrunk,
  release: () => void,
): SipTelephonyLeg {
  const { bridges } = trunk;
  return new SipTelephonyLeg({
    agent,
    dialog,
    rtp: live.rtp,
    ...(bridges !== undefined && {
      bridge: bridgeThroughTrunk(bridges, trunk.store, trunk.orgId, trunk.numberOf, () => ({
        dialog,
        rtp: live.rtp,
        media: live.media,
        local: live.local,
        lastSdp: live.lastSdp,
        ended: live.session.done,
        release,
      })),
    }),
  });
}

/**
 * What an answered call's RTP session reports, inbound and outbound alike: keys (to the
 * destination once a bridge carries the call, else to the keypad) and the RTP timeout.
 */
export function callRtpEvents(
  slot: { readonly live?: LiveSipCall | undefined },
  bridges: SipBridges | undefined,
  inactivityTimeoutMs: number | undefined,
  rtpTimeoutReason: string,
): Pick<RtpSessionOptions, 'inactivityTimeoutMs' | 'onDtmf' | 'onInactive'> {
  return {
    ...(inactivityTimeoutMs !== undefined && { inactivityTimeoutMs }),
    onDtmf: (event) => {
      if (bridges?.relayDtmf(slot.live?.rtp, event) !== true) {
        slot.live?.keypad.digit(event.digit);
      }
    },
    onInactive: () => slot.live?.session.end(rtpTimeoutReason),
  };
}
