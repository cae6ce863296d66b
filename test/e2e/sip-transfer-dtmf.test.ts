/**
 * Transfers bridged by Parla, as a telephony engineer checks them: keys cross the bridge (the
 * caller's RFC 2833 digit from SIPp's pcap reaches the destination as an RFC 4733 event, after
 * the destination's extension, which Parla keys once the destination answers), the transfer is
 * reported (`transfer-update`) as it starts, and a REFER answered 481 (the dialog is gone) leads
 * to no call to anyone. The destination's media is the
 * test's own UDP socket, so the test reads exactly what Parla sent there.
 */
import { createSocket } from 'node:dgram';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { hasSipp, runSipp } from '../support/sipp.js';
import {
  freeUdpPort,
  rtpPeer,
  sippArgs,
  sippMediaPort,
  startSippUas,
  useSipHarness,
} from '../calls/sip-call-harness.js';
import { keysIn, liveCallOn, numberOnTrunk } from './sip-transfer-support.js';

const h = useSipHarness();

describe.skipIf(!hasSipp)('keys across a transfer bridged by Parla', () => {
  it(
    'keys the extension after the answer, then the caller RFC 2833 digit, as events',
    { timeout: 90_000 },
    async () => {
      const gatewayPort = await freeUdpPort();
      const number = '+15550009600';
      const phoneNumberId = await numberOnTrunk(h, number, gatewayPort);
      const destinationMedia = await rtpPeer();
      const destination = startSippUas('transfer-destination-media.xml', gatewayPort, [
        '-set',
        'rtpport',
        String(destinationMedia.port),
      ]);
      const caller = runSipp(
        sippArgs(h, 'transfer-refuse-dtmf.xml', ['-s', number, '-mp', String(sippMediaPort())]),
        tmpdir(),
      );
      try {
        const callId = await liveCallOn(h, phoneNumberId);
        const session = h.engine.session(callId)!;
        const target = { type: 'number', number: '+15550199', extension: '4w2' };
        expect(session.control({ type: 'transfer', destination: target })).toEqual({ ok: true });
        // The extension (after Parla's 1 s pause), then the caller's 1 from SIPp's pcap.
        await expect
          .poll(() => keysIn(destinationMedia.packets), { timeout: 15_000, interval: 50 })
          .toBe('421');
        expect(h.sip.bridges.dtmfStats.relayedAsEvents).toBeGreaterThanOrEqual(1);
        // The transfer was reported as it started, with its destination.
        const updates = h.observers.get(callId)!.events.filter((e) => e.type === 'transfer-update');
        expect(updates).toEqual([expect.objectContaining({ destination: target })]);
        const [callerResult, destinationResult] = await Promise.all([caller, destination.exited]);
        expect(callerResult.code, callerResult.output).toBe(0);
        expect(destinationResult.code, destinationResult.output).toBe(0);
        await session.done;
        const stored = await h.store.resources.calls.get(h.orgId, callId);
        expect(stored).toMatchObject({ endedReason: 'assistant-forwarded-call' });
      } finally {
        destination.child.kill();
        destinationMedia.socket.close();
      }
    },
  );
});

describe.skipIf(!hasSipp)('a REFER answered 481', () => {
  it('dials no one: the dialog is gone and the call ends', { timeout: 60_000 }, async () => {
    const gatewayPort = await freeUdpPort();
    // The trunk's outbound gateway: any datagram here would be an INVITE to the destination.
    const gateway = createSocket('udp4');
    const atGateway: Buffer[] = [];
    gateway.on('message', (data) => atGateway.push(data));
    await new Promise<void>((resolve) => gateway.bind(gatewayPort, '127.0.0.1', resolve));
    try {
      const number = '+15550009700';
      const phoneNumberId = await numberOnTrunk(h, number, gatewayPort);
      const caller = runSipp(
        sippArgs(h, 'transfer-refer-481.xml', ['-s', number, '-mp', String(sippMediaPort())]),
        tmpdir(),
      );
      const callId = await liveCallOn(h, phoneNumberId);
      const session = h.engine.session(callId)!;
      expect(
        session.control({
          type: 'transfer',
          destination: {
            type: 'number',
            number: '+15550199',
            transferPlan: { fallbackPlan: { message: 'Sorry, nobody can take your call.' } },
          },
        }),
      ).toEqual({ ok: true });
      const result = await caller;
      expect(result.code, result.output).toBe(0);
      await session.done;
      const stored = await h.store.resources.calls.get(h.orgId, callId);
      expect(stored?.status).toBe('ended');
      // The dialog layer ends the dialog on the 481 (RFC 3261 12.2.1.2): the caller is gone, so
      // the fallback has no one to speak to and the call ends as the caller's hang-up.
      expect(stored?.endedReason).toBe('customer-ended-call');
      expect(h.sip.bridges.size).toBe(0);
      expect(atGateway).toEqual([]);
    } finally {
      gateway.close();
    }
  });
});
