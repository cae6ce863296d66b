import type { SipRequest } from './message.js';

/** A digit sent in a SIP INFO (the DTMF path of trunks without RFC 4733). */
export interface InfoDtmf {
  digit: string;
  durationMs?: number;
}

const DIGIT_RE = /^[0-9*#A-D]$/;
const MAX_BODY_BYTES = 1024;

/**
 * Reads the digit of an in-dialog INFO with `application/dtmf-relay` (`Signal=5` and
 * optionally `Duration=160` lines, the Cisco format most trunks send) or `application/dtmf`
 * (the bare digit). Returns undefined for any other INFO or a malformed body; event codes
 * 10/11 stand for `*` and `#` in some senders and are mapped.
 */
export function readInfoDtmf(request: SipRequest): InfoDtmf | undefined {
  if (request.method !== 'INFO' || request.body.length > MAX_BODY_BYTES) {
    return undefined;
  }
  const type = request.headers.get('Content-Type')?.split(';')[0]?.trim().toLowerCase();
  const body = request.body.toString('utf8').trim();
  if (type === 'application/dtmf') {
    const digit = normalise(body);
    return digit === undefined ? undefined : { digit };
  }
  if (type !== 'application/dtmf-relay') {
    return undefined;
  }
  let digit: string | undefined;
  let durationMs: number | undefined;
  for (const line of body.split(/\r?\n/)) {
    const match = /^\s*(signal|duration)\s*=\s*(\S+)\s*$/i.exec(line);
    if (match === null) {
      continue;
    }
    if (match[1]!.toLowerCase() === 'signal') {
      digit = normalise(match[2]!);
    } else if (/^[0-9]{1,5}$/.test(match[2]!)) {
      durationMs = Number(match[2]);
    }
  }
  if (digit === undefined) {
    return undefined;
  }
  return durationMs === undefined ? { digit } : { digit, durationMs };
}

function normalise(text: string): string | undefined {
  const value = text === '10' ? '*' : text === '11' ? '#' : text.toUpperCase();
  return DIGIT_RE.test(value) ? value : undefined;
}
