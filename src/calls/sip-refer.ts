/**
 * The REFER side of a SIP blind transfer (RFC 3515, the transferor's part of RFC 5589): the
 * Refer-To of a destination, the status a refer NOTIFY reports, and what a refusal of the
 * REFER itself means for the call (bridge it ourselves, ask again, or give up).
 */
import type { Doc } from '../store/resource-store.js';
import type { SipRequest } from '../transports/sip/message.js';
import { formatUri, isSipUri, parseUri } from '../transports/sip/uri.js';

/** Headers a destination's sipHeaders may not set on the REFER (the dialog owns them). */
const RESERVED_HEADERS = new Set([
  'via',
  'from',
  'to',
  'call-id',
  'cseq',
  'contact',
  'max-forwards',
  'content-length',
  'content-type',
  'route',
  'record-route',
  'refer-to',
  'referred-by',
  'event',
]);
const TOKEN_RE = /^[A-Za-z0-9\-.!%*_+`'~]+$/;
const NUMBER_RE = /^\+?[0-9A-Za-z]{1,40}$/;
/** A dial string: keys and `w` (0.5 s) / `W` (1 s) pauses, as the control message allows. */
export const EXTENSION_RE = /^[0-9*#wW]{1,10}$/;

type Target =
  | { ok: true; referTo: string; headers: [string, string][] }
  | { ok: false; code: string; message: string };

/**
 * The Refer-To URI (and extra REFER headers) for a transfer destination. A number's extension
 * rides in the user part as a hint for the transferee: RFC 3966 `;ext=` when it is digits only,
 * else RFC 4715 `;postd=` (pauses as `p`, one second each; `#` escaped). Parla cannot key it
 * itself: once the REFER is taken the call is no longer ours.
 */
export function referTarget(destination: Doc, numberHost: string | undefined): Target {
  const bad = (message: string): Target => ({ ok: false, code: 'invalid-destination', message });
  const plan = isRecord(destination.transferPlan) ? destination.transferPlan : {};
  const headerPairs = sipHeaderPairs(destination.sipHeaders);
  if (typeof headerPairs === 'string') {
    return bad(headerPairs);
  }
  let uri: string;
  if (destination.type === 'number') {
    const number = typeof destination.number === 'string' ? destination.number : '';
    const extension = destination.extension;
    if (!NUMBER_RE.test(number)) {
      return bad('destination.number must be an optional + and 1-40 letters or digits');
    }
    if (
      extension !== undefined &&
      (typeof extension !== 'string' || !EXTENSION_RE.test(extension) || !/[^wW]/.test(extension))
    ) {
      return bad('destination.extension must be 1-10 of 0-9, *, #, w and W, with a key');
    }
    if (numberHost === undefined) {
      return bad('the call has no peer host to send a number to');
    }
    const user = encodeURIComponent(number).replace(/^%2B/, '+');
    uri = `sip:${user}${extension === undefined ? '' : extensionParameter(extension)}@${numberHost}`;
  } else if (destination.type === 'sip') {
    const parsed = typeof destination.sipUri === 'string' ? parseUri(destination.sipUri) : null;
    if (parsed === null || !isSipUri(parsed)) {
      return bad('destination.sipUri must be a sip: or sips: URI');
    }
    uri = formatUri(parsed);
  } else {
    return {
      ok: false,
      code: 'transfer-not-supported',
      message: `a SIP call cannot be transferred to a destination of type ${String(destination.type)}`,
    };
  }
  if (plan.sipHeadersInReferToEnabled === true && headerPairs.length > 0) {
    const encoded = headerPairs
      .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
      .join('&');
    uri += uri.includes('?') ? `&${encoded}` : `?${encoded}`;
    return { ok: true, referTo: `<${uri}>`, headers: [] };
  }
  return { ok: true, referTo: `<${uri}>`, headers: headerPairs };
}

function extensionParameter(extension: string): string {
  return /^[0-9]+$/.test(extension)
    ? `;ext=${extension}`
    : `;postd=${extension.replace(/[wW]/g, 'p').replace(/#/g, '%23')}`;
}

/** A destination's sipHeaders as header pairs, or why they cannot be sent. */
function sipHeaderPairs(value: unknown): [string, string][] | string {
  if (value === undefined) {
    return [];
  }
  if (!isRecord(value)) {
    return 'destination.sipHeaders must be an object';
  }
  const pairs: [string, string][] = [];
  for (const [name, raw] of Object.entries(value)) {
    const text = typeof raw === 'string' || typeof raw === 'number' ? String(raw) : undefined;
    if (!TOKEN_RE.test(name) || RESERVED_HEADERS.has(name.toLowerCase())) {
      return `destination.sipHeaders: "${name.slice(0, 64)}" cannot be set`;
    }
    if (text === undefined || /[\r\n\0]/.test(text) || text.length > 1024) {
      return `destination.sipHeaders.${name}: a string of at most 1024 characters on one line`;
    }
    pairs.push([name, text]);
  }
  return pairs;
}

/** The status line of a refer NOTIFY's sipfrag, and whether the subscription ended. */
export function readReferNotify(
  request: SipRequest,
): { status: number | undefined; terminated: boolean } | undefined {
  const event = request.headers.get('Event') ?? '';
  if (event.split(';')[0]?.trim().toLowerCase() !== 'refer') {
    return undefined;
  }
  const state = request.headers.get('Subscription-State') ?? '';
  const terminated = state.split(';')[0]?.trim().toLowerCase() === 'terminated';
  const type = request.headers.get('Content-Type')?.split(';')[0]?.trim().toLowerCase();
  const match =
    type === 'message/sipfrag'
      ? /^SIP\/2\.0[ \t]+([1-6][0-9]{2})(?:[ \t]|\r?\n|$)/.exec(request.body.toString('utf8'))
      : null;
  return { status: match === null ? undefined : Number(match[1]), terminated };
}

/**
 * Final responses to an in-dialog request that say the dialog itself is gone (RFC 3261
 * §12.2.1.2 for 481 and 408, which the dialog layer also synthesises on a transaction timeout;
 * RFC 5057 §5.1 for the rest: the remote target is unknown or unreachable).
 */
const DIALOG_GONE = new Set([404, 408, 410, 416, 481, 482, 483, 484, 485, 502, 604]);

/**
 * What a final non-2xx to our REFER means:
 * - `dialog-gone`: the peer or the dialog is gone (above): dialling a third party for a call
 *   that may be dead is wrong, so the transfer fails and the fallbackPlan runs;
 * - `retry`: 491 Request Pending, another transaction of the dialog is under way: one more
 *   REFER after the RFC 3261 §14.1 wait;
 * - `bridge`: the peer is there but will not carry this transfer. The method (405, 501), the
 *   policy (403, 603, 401/407 challenges we do not answer in a dialog), the event package or an
 *   extension (420, 489), the request (400, 413, 488, 513) or a passing failure (480, 486, 500,
 *   503, 504, 3xx, other 6xx): Parla dials the destination and bridges.
 */
export function referRefusal(status: number): 'dialog-gone' | 'retry' | 'bridge' {
  if (DIALOG_GONE.has(status)) {
    return 'dialog-gone';
  }
  return status === 491 ? 'retry' : 'bridge';
}

/** RFC 3261 §14.1: after a 491 the Call-ID's owner waits 2.1–4 s (the others 0–2 s). */
export function requestPendingWaitMs(random: () => number = Math.random): number {
  return 2100 + Math.floor(random() * 1900);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
