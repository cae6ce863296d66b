/**
 * Whether an inbound INVITE may start a call, before anything is stored: the flood guard, the
 * number lookup, the trunk allowlist and digest credentials. Refusals are the same whether the
 * number exists or not: a challenge (401) until fresh credentials come, then 403.
 */
import type { Store } from '../store/store.js';
import type { SipDialogLayer } from '../transports/sip/dialog-layer.js';
import { SipFloodGuard } from '../transports/sip/flood-guard.js';
import { getTo } from '../transports/sip/message.js';
import type { IncomingInvite } from '../transports/sip/sip-user-agent.js';
import { parseUri } from '../transports/sip/uri.js';
import { SipInboundAuth } from './sip-inbound-auth.js';
import { userOf } from './sip-inbound-records.js';
import { routeInbound, type InboundRoute } from './sip-inbound-route.js';

export interface SipInboundAdmissionOptions {
  readonly store: Store;
  /** Ignores sources that keep being refused; false turns it off. Default: a SipFloodGuard. */
  readonly floodGuard?: SipFloodGuard | false;
  /** The digest realm, or false to answer 403 at once instead of challenging. */
  readonly digestRealm: string | false;
}

export type Admission =
  | Extract<InboundRoute, { ok: true }>
  | { readonly ok: false; readonly status: 401 | 403; readonly headers: [string, string][] };

export class SipInboundAdmission {
  readonly floodGuard: SipFloodGuard | undefined;
  private readonly auth: SipInboundAuth | undefined;

  constructor(private readonly options: SipInboundAdmissionOptions) {
    this.floodGuard =
      options.floodGuard === false ? undefined : (options.floodGuard ?? new SipFloodGuard());
    this.auth = options.digestRealm === false ? undefined : new SipInboundAuth(options.digestRealm);
  }

  /** Drops every out-of-dialog request of an ignored source before the layer answers it. */
  guard(dialogs: SipDialogLayer): void {
    const guard = this.floodGuard;
    if (guard === undefined) {
      return;
    }
    dialogs.ignoreRequest = (request, source) => {
      if (guard.isBlocked(source.address)) {
        return true;
      }
      // Parla is no registrar: every REGISTER is refused (405), so each counts as a refusal.
      if (request.method === 'REGISTER') {
        guard.recordReject(source.address);
      }
      return false;
    };
  }

  async admit(invite: IncomingInvite): Promise<Admission> {
    const { request } = invite;
    const source = invite.source.address;
    const dialled = [userOf(parseUri(request.uri)), userOf(getTo(request)?.uri)];
    const auth = this.auth;
    const offered = auth?.offered(request) ?? null;
    const route = await routeInbound(
      this.options.store,
      dialled.filter((user): user is string => user !== undefined),
      source,
      auth === undefined || offered === null
        ? undefined
        : (trunk) => auth.trunkAccepts(trunk, offered, request),
    );
    if (route.ok) {
      this.floodGuard?.recordAccepted(source);
      return route;
    }
    if (auth !== undefined && (offered === null || offered.nonce !== 'fresh')) {
      // A stale nonce is a real peer's retry; a forged one counts as a refusal.
      if (offered?.nonce === 'forged') {
        this.floodGuard?.recordReject(source);
      } else {
        this.floodGuard?.recordChallenge(source);
      }
      const challenge = auth.challenge(offered?.nonce === 'stale');
      return { ok: false, status: 401, headers: [['WWW-Authenticate', challenge]] };
    }
    this.floodGuard?.recordReject(source);
    return { ok: false, status: 403, headers: [] };
  }
}
