import type { Doc, Resource } from '../store/resource-store.js';
import type { CallStarter } from './call-starter.js';
import { ENDED_REASON_TRANSPORT } from './sip-outbound-plan.js';

/** What dials an outbound phone call (SipOutboundCalls). */
export interface OutboundPhoneCalls {
  start(orgId: string, call: Resource): Promise<Doc>;
}

/**
 * Starts `outboundPhoneCall`s over SIP and hands every other call to `next` (the websocket
 * starter). Without a SIP server (its port was taken at start) phone calls end at once.
 */
export class PhoneCallStarter implements CallStarter {
  constructor(
    private readonly outbound: OutboundPhoneCalls | undefined,
    private readonly next: CallStarter,
  ) {}

  start(orgId: string, call: Resource): Promise<Doc> {
    if (call.type !== 'outboundPhoneCall') {
      return this.next.start(orgId, call);
    }
    if (this.outbound === undefined) {
      const now = new Date().toISOString();
      return Promise.resolve({
        status: 'ended',
        endedReason: ENDED_REASON_TRANSPORT,
        endedMessage: 'SIP is not running on this Parla server, so it cannot place phone calls',
        startedAt: now,
        endedAt: now,
      });
    }
    return this.outbound.start(orgId, call);
  }
}
