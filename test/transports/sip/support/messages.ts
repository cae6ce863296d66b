import {
  createResponse,
  type SipRequest,
  type SipResponse,
} from '../../../../src/transports/sip/message.js';
import { parseSipMessage } from '../../../../src/transports/sip/parser.js';

/** Parses message text written with \n line ends. */
export function sip(text: string): SipRequest | SipResponse {
  const [head, ...rest] = text.replace(/^\n/, '').split('\n\n');
  const data = Buffer.from(`${head!.split('\n').join('\r\n')}\r\n\r\n${rest.join('\n\n')}`);
  const result = parseSipMessage(data);
  if (!result.ok) {
    throw new Error(`${result.code}: ${result.reason}`);
  }
  return result.message;
}

export function request(
  method: string,
  options: { branch?: string; callId?: string; via?: string } = {},
): SipRequest {
  const via =
    options.via ?? `SIP/2.0/UDP 198.51.100.7:5070;branch=${options.branch ?? 'z9hG4bK-test-1'}`;
  return sip(`
${method} sip:bob@192.0.2.1 SIP/2.0
Via: ${via}
Max-Forwards: 70
From: <sip:alice@example.com>;tag=from1
To: <sip:bob@example.com>
Call-ID: ${options.callId ?? 'call-1@example.com'}
CSeq: 1 ${method}
Content-Length: 0
`) as SipRequest;
}

/** A response to `request`, with a To tag unless it is a 100. */
export function reply(to: SipRequest, status: number): SipResponse {
  return createResponse(to, status, { toTag: 'to1' });
}

/** The ACK a UAC sends for a non-2xx response to `invite` (same branch). */
export function ackFor(invite: SipRequest): SipRequest {
  const ack = request('ACK', { via: invite.headers.getAll('Via')[0]! });
  ack.headers.set('To', '<sip:bob@example.com>;tag=to1');
  return ack;
}
