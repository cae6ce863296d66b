/**
 * Issue 6: a transfer Parla carries itself. SIPp calls in as the trunk, with the test's own UDP
 * socket as its media; the far end refuses the REFER (405), so Parla dials the destination (a
 * second SIPp, a UAS echoing RTP, behind the same trunk's outbound gateway) and relays the
 * media. The caller's audio goes to the destination and comes back; the caller's BYE reaches
 * the destination; the call is stored as forwarded. An outbound call is bridged the same way
 * through the trunk it was dialled on.
 */
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { hasSipp, runSipp } from '../support/sipp.js';
import {
  freeUdpPort,
  pcmuPacket,
  rtpPeer,
  sippArgs,
  sippMediaPort,
  startSippUas,
  useSipHarness,
} from '../calls/sip-call-harness.js';
import { liveCallOn, numberOnTrunk } from './sip-transfer-support.js';

const h = useSipHarness();

/** A packet whose whole payload is one non-silent μ-law byte: the caller's own sound. */
function isCallerSound(packet: Buffer): boolean {
  if (packet.length !== 12 + 160 || (packet[1]! & 0x7f) !== 0) {
    return false;
  }
  const first = packet[12]!;
  return first !== 0xff && first !== 0x7f && packet.subarray(12).every((byte) => byte === first);
}

describe.skipIf(!hasSipp)('a transfer bridged by Parla when the REFER is refused', () => {
  it(
    'dials the destination, relays audio both ways, and passes the BYE on',
    { timeout: 90_000 },
    async () => {
      const destinationPort = await freeUdpPort();
      // One trunk: SIPp calls in from 127.0.0.1, and its outbound gateway is the destination.
      const number = '+15550009400';
      const phoneNumberId = await numberOnTrunk(h, number, destinationPort);
      const destination = startSippUas('transfer-destination-echo.xml', destinationPort, [
        '-mp',
        String(sippMediaPort()),
        '-rtp_echo',
      ]);
      const peer = await rtpPeer();
      const caller = runSipp(
        sippArgs(h, 'transfer-refuse-then-bye.xml', [
          '-s',
          number,
          '-set',
          'rtpport',
          String(peer.port),
        ]),
        tmpdir(),
      );
      const callId = await liveCallOn(h, phoneNumberId);
      // The caller talks: the same loud μ-law byte every 20 ms, to Parla's port for the caller.
      const session = h.engine.session(callId)!;
      let seq = 0;
      // Parla sends from the port it receives on (symmetric RTP).
      let parlaPort: number | undefined;
      peer.socket.on('message', (_data, source) => {
        parlaPort ??= source.port;
      });
      const talk = setInterval(() => {
        if (parlaPort !== undefined) {
          peer.socket.send(pcmuPacket(seq++, 0x2a, 0x1234abcd), parlaPort, '127.0.0.1');
        }
      }, 20);
      try {
        await expect.poll(() => parlaPort, { timeout: 10_000, interval: 50 }).toBeDefined();
        const beforeTransfer = peer.packets.filter(isCallerSound).length;
        expect(
          session.control({
            type: 'transfer',
            destination: { type: 'number', number: '+15550199' },
          }),
        ).toEqual({ ok: true });
        // The caller's sound went to the destination, was echoed, and came back through Parla.
        await expect
          .poll(() => peer.packets.filter(isCallerSound).length, { timeout: 15_000, interval: 50 })
          .toBeGreaterThan(beforeTransfer + 25);
        expect(h.sip.bridges.size).toBe(1);
        const [callerResult, destinationResult] = await Promise.all([caller, destination.exited]);
        expect(callerResult.code, callerResult.output).toBe(0);
        // The destination got the BYE that the caller's hang-up caused.
        expect(destinationResult.code, destinationResult.output).toBe(0);
      } finally {
        clearInterval(talk);
        peer.socket.close();
      }
      await expect.poll(() => h.sip.bridges.size, { timeout: 5000 }).toBe(0);
      await session.done;
      const stored = await h.store.resources.calls.get(h.orgId, callId);
      expect(stored).toMatchObject({
        status: 'ended',
        endedReason: 'assistant-forwarded-call',
        destination: { type: 'number', number: '+15550199' },
      });
    },
  );
});

describe.skipIf(!hasSipp)('a bridged transfer of an outbound SIP call', () => {
  it(
    'dials the destination through the same trunk and passes the customer BYE on',
    { timeout: 90_000 },
    async () => {
      const port = await freeUdpPort();
      const { phoneNumberId, assistantId } = await h.outboundNumber({
        port,
        number: '+15550009500',
        assistant: { metadata: { echoMode: 'tone' } },
      });
      // One SIPp for both calls: the customer, and the destination dialled after the 405.
      const trunk = startSippUas('transfer-outbound-refuse.xml', port, [
        '-mp',
        String(sippMediaPort()),
        '-rtp_echo',
        '-m',
        '2',
      ]);
      const [status, call] = await h.post('/call', {
        assistantId,
        phoneNumberId,
        customer: { number: '+15550009999' },
      });
      expect(status, JSON.stringify(call)).toBe(201);
      const callId = call.id as string;
      await expect
        .poll(() => h.engine.session(callId)?.state, { timeout: 15_000, interval: 50 })
        .toBe('in-progress');
      const session = h.engine.session(callId)!;
      expect(
        session.control({ type: 'transfer', destination: { type: 'number', number: '+15550199' } }),
      ).toEqual({ ok: true });
      await expect.poll(() => h.sip.bridges.size, { timeout: 15_000, interval: 50 }).toBe(1);
      await session.done;
      const result = await trunk.exited;
      expect(result.code, result.output).toBe(0);
      await expect.poll(() => h.sip.bridges.size, { timeout: 5000 }).toBe(0);
      const stored = await h.store.resources.calls.get(h.orgId, callId);
      expect(stored).toMatchObject({ status: 'ended', endedReason: 'assistant-forwarded-call' });
    },
  );
});
