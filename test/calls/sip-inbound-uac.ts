/**
 * A minimal SIP caller over UDP for tests that must read the headers of Parla's final answer
 * (302 Contact, Reason): sends one INVITE from a chosen loopback address, gathers every
 * response, ACKs a final non-2xx (RFC 3261 §17.1.1.3) and returns what arrived.
 */
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { parseSipMessage } from '../../src/transports/sip/parser.js';
import type { SipResponse } from '../../src/transports/sip/message.js';

export interface UacResult {
  /** Every response, in arrival order (retransmissions included). */
  readonly responses: SipResponse[];
  /** The first final response, or undefined when none came within the wait. */
  readonly final: SipResponse | undefined;
}

export interface UacOptions {
  readonly port: number;
  readonly number: string;
  /** Loopback address to send from (127.0.0.2… keep flood tests apart). Default 127.0.0.1. */
  readonly fromAddress?: string;
  /** How long to wait for a final answer. Default 15 s. */
  readonly waitMs?: number;
  readonly fromUser?: string;
  /** Extra header fields of the INVITE (an Authorization answering a challenge). */
  readonly headers?: readonly (readonly [string, string])[];
}

/** The Request-URI inviteOnce sends to (what a digest answer must name). */
export function uacTarget(port: number, number: string): string {
  return `sip:${number}@127.0.0.1:${port}`;
}

const SDP = [
  'v=0',
  'o=uac 1 1 IN IP4 127.0.0.1',
  's=-',
  'c=IN IP4 127.0.0.1',
  't=0 0',
  'm=audio 40000 RTP/AVP 0 8 101',
  'a=rtpmap:0 PCMU/8000',
  'a=rtpmap:8 PCMA/8000',
  'a=rtpmap:101 telephone-event/8000',
  '',
].join('\r\n');

export async function inviteOnce(options: UacOptions): Promise<UacResult> {
  const address = options.fromAddress ?? '127.0.0.1';
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, address, resolve));
  const localPort = socket.address().port;
  const branch = `z9hG4bK${randomBytes(6).toString('hex')}`;
  const callId = `${randomBytes(8).toString('hex')}@uac`;
  const fromTag = randomBytes(4).toString('hex');
  const target = uacTarget(options.port, options.number);
  const common = [
    `Via: SIP/2.0/UDP ${address}:${localPort};branch=${branch};rport`,
    `From: <sip:${options.fromUser ?? '+15550001111'}@${address}>;tag=${fromTag}`,
  ];
  const invite = [
    `INVITE ${target} SIP/2.0`,
    ...common,
    `To: <${target}>`,
    `Call-ID: ${callId}`,
    'CSeq: 1 INVITE',
    `Contact: <sip:uac@${address}:${localPort}>`,
    'Max-Forwards: 70',
    ...(options.headers ?? []).map(([name, value]) => `${name}: ${value}`),
    'Content-Type: application/sdp',
    `Content-Length: ${Buffer.byteLength(SDP)}`,
    '',
    SDP,
  ].join('\r\n');
  const responses: SipResponse[] = [];
  let final: SipResponse | undefined;
  const done = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, options.waitMs ?? 15_000);
    socket.on('message', (data) => {
      const parsed = parseSipMessage(data);
      if (!parsed.ok || parsed.message.kind !== 'response') {
        return;
      }
      const response = parsed.message;
      responses.push(response);
      if (response.status >= 200 && final === undefined) {
        final = response;
        if (response.status >= 300) {
          const ack = [
            `ACK ${target} SIP/2.0`,
            ...common,
            `To: ${response.headers.get('to') ?? ''}`,
            `Call-ID: ${callId}`,
            'CSeq: 1 ACK',
            'Max-Forwards: 70',
            'Content-Length: 0',
            '',
            '',
          ].join('\r\n');
          socket.send(ack, options.port, '127.0.0.1');
        }
        clearTimeout(timer);
        // Leave time for a retransmitted final (answered with the same ACK by a real UAC).
        setTimeout(resolve, 100);
      }
    });
  });
  socket.send(invite, options.port, '127.0.0.1');
  await done;
  socket.close();
  return { responses, final };
}

/**
 * Sends one out-of-dialog request without a body (REGISTER, OPTIONS) from `fromAddress` and
 * returns every response that arrives within `waitMs`.
 */
export async function requestOnce(options: {
  readonly port: number;
  readonly method: string;
  readonly fromAddress: string;
  readonly waitMs: number;
}): Promise<SipResponse[]> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, options.fromAddress, resolve));
  const localPort = socket.address().port;
  const target = `sip:127.0.0.1:${options.port}`;
  const request = [
    `${options.method} ${target} SIP/2.0`,
    `Via: SIP/2.0/UDP ${options.fromAddress}:${localPort};branch=z9hG4bK${randomBytes(6).toString('hex')};rport`,
    `From: <sip:scanner@${options.fromAddress}>;tag=${randomBytes(4).toString('hex')}`,
    `To: <sip:scanner@${options.fromAddress}>`,
    `Call-ID: ${randomBytes(8).toString('hex')}@uac`,
    `CSeq: 1 ${options.method}`,
    `Contact: <sip:scanner@${options.fromAddress}:${localPort}>`,
    'Max-Forwards: 70',
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
  const responses: SipResponse[] = [];
  socket.on('message', (data) => {
    const parsed = parseSipMessage(data);
    if (parsed.ok && parsed.message.kind === 'response') {
      responses.push(parsed.message);
    }
  });
  socket.send(request, options.port, '127.0.0.1');
  await new Promise((resolve) => setTimeout(resolve, options.waitMs));
  socket.close();
  return responses;
}
