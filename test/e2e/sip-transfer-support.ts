/**
 * What the SIP transfer end-to-end tests share: a trunk whose outbound gateway is where the
 * destination (a SIPp or a bare socket) listens, a number on it, the live call SIPp placed to
 * it, and the keys a stream of RTP packets carried.
 */
import { expect } from 'vitest';
import { TelephoneEventReceiver } from '../../src/transports/rtp/telephone-event.js';
import type { SipHarness } from '../calls/sip-call-harness.js';

/** The keys in RTP packets with telephone-event payload type 101, each once, in order. */
export function keysIn(packets: readonly Buffer[]): string {
  let keys = '';
  const receiver = new TelephoneEventReceiver(8000, (event) => (keys += event.digit));
  for (const packet of packets) {
    if (packet.length >= 16 && (packet[1]! & 0x7f) === 101) {
      receiver.receive(packet.readUInt32BE(4), packet, 12, packet.length - 12);
    }
  }
  return keys;
}

/**
 * A `byo-sip-trunk` whose outbound gateway is 127.0.0.1:`gatewayPort` (SIPp calls in from
 * 127.0.0.1 too), a tone assistant, and `number` on that trunk; resolves with the number's id.
 */
export async function numberOnTrunk(
  h: SipHarness,
  number: string,
  gatewayPort: number,
): Promise<string> {
  const [, credential] = await h.post('/credential', {
    provider: 'byo-sip-trunk',
    gateways: [{ ip: '127.0.0.1', port: gatewayPort }],
  });
  // A tone assistant: what comes back as the caller's own sound came through a bridge.
  const [, assistant] = await h.post('/assistant', {
    name: 'SIP transfer test',
    metadata: { echoMode: 'tone' },
  });
  const [status, phoneNumber] = await h.post('/phone-number', {
    provider: 'byo-phone-number',
    number,
    credentialId: credential.id,
    assistantId: assistant.id,
  });
  expect(status).toBe(201);
  return phoneNumber.id as string;
}

/** The id of the call on the number, once it is in progress. */
export async function liveCallOn(h: SipHarness, phoneNumberId: string): Promise<string> {
  let callId: string | undefined;
  await expect
    .poll(
      async () => {
        const call = (await h.callsOf(phoneNumberId))[0];
        callId = call?.id as string | undefined;
        return call?.status;
      },
      { timeout: 15_000, interval: 50 },
    )
    .toBe('in-progress');
  return callId!;
}
