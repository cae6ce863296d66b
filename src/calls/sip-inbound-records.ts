/**
 * The stored side of an inbound SIP call: the call document an INVITE creates, and the end of a
 * call that never reached the pipeline.
 */
import type { Doc, Resource } from '../store/resource-store.js';
import type { Store } from '../store/store.js';
import { getFrom, type SipRequest } from '../transports/sip/message.js';
import { parseSdp, type SdpSession } from '../transports/sip/sdp.js';
import { decodeUriPart, isSipUri, type AnyUri } from '../transports/sip/uri.js';

const MAX_USER_LENGTH = 64;

/** The user part of a SIP URI, or a tel: URI's number, decoded and bounded. */
export function userOf(uri: AnyUri | null | undefined): string | undefined {
  if (uri === null || uri === undefined) {
    return undefined;
  }
  const user = isSipUri(uri) ? uri.user : uri.scheme === 'tel' ? uri.opaque : undefined;
  return user === undefined ? undefined : decodeUriPart(user).slice(0, MAX_USER_LENGTH);
}

/** The INVITE's SDP offer, if it carries one that parses. */
export function offerOf(request: SipRequest): SdpSession | undefined {
  if (request.body.length === 0) {
    return undefined;
  }
  const parsed = parseSdp(request.body.toString('utf8'));
  return parsed.ok ? parsed.session : undefined;
}

export function inboundCallDoc(request: SipRequest, phoneNumber: Resource): Doc {
  const fromUser = userOf(getFrom(request)?.uri);
  const doc: Doc = {
    type: 'inboundPhoneCall',
    status: 'queued',
    phoneCallTransport: 'sip',
    phoneNumberId: phoneNumber.id,
    customer: fromUser === undefined ? {} : { number: fromUser },
  };
  for (const field of ['assistantId', 'squadId', 'workflowId'] as const) {
    if (typeof phoneNumber[field] === 'string') {
      doc[field] = phoneNumber[field];
    }
  }
  return doc;
}

export async function endStored(
  store: Store,
  orgId: string,
  callId: string,
  endedReason: string,
  endedMessage?: string,
  extra: Doc = {},
): Promise<void> {
  const now = new Date().toISOString();
  await store.resources.calls.update(orgId, callId, (current) => ({
    ...current,
    ...extra,
    status: 'ended',
    endedReason,
    ...(endedMessage !== undefined && { endedMessage }),
    startedAt: now,
    endedAt: now,
  }));
}
