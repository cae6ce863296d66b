import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeMuLaw } from '../../../src/media/codecs/g711.js';
import { parseRtcpCompound } from '../../../src/transports/rtp/rtcp-packet.js';
import { RtpPacketView, parseRtpPacket } from '../../../src/transports/rtp/rtp-packet.js';
import { RtpPortAllocator } from '../../../src/transports/rtp/rtp-port-allocator.js';
import { RtpSession, type RtpSessionOptions } from '../../../src/transports/rtp/rtp-session.js';
import { ManualScheduler } from '../sip/support/manual-scheduler.js';
import { SIPP_PCAP_DIR } from '../../support/sipp.js';
import { readPcapUdp } from './support/pcap-reader.js';
import { UdpPeer, openPeerPair } from './support/udp-peer.js';

const SIPP = SIPP_PCAP_DIR;
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    await cleanup();
  }
});

function newAllocator(pairs = 50): RtpPortAllocator {
  const minPort = 30_000 + 2 * Math.floor(Math.random() * 5000);
  return new RtpPortAllocator({ minPort, maxPort: minPort + pairs * 2 - 1 });
}

async function openSession(
  options: Partial<RtpSessionOptions> = {},
): Promise<{ session: RtpSession; scheduler: ManualScheduler }> {
  const scheduler = new ManualScheduler();
  const session = await RtpSession.open({
    allocator: newAllocator(),
    bindAddress: '127.0.0.1',
    codec: 'PCMU',
    payloadType: 0,
    telephoneEventPayloadType: 101,
    now: () => scheduler.nowMs,
    wallClockMs: () => 1_700_000_000_000 + scheduler.nowMs,
    scheduler,
    random: () => 0.5,
    ...options,
  });
  cleanups.push(() => session.close());
  return { session, scheduler };
}

async function peerPair(): Promise<{ rtp: UdpPeer; rtcp: UdpPeer }> {
  const pair = await openPeerPair();
  cleanups.push(
    () => pair.rtp.close(),
    () => pair.rtcp.close(),
  );
  return pair;
}

function rtp(seq: number, timestamp: number, payloadType: number, payload: Uint8Array, ssrc = 42) {
  const packet = new Uint8Array(12 + payload.length);
  packet[0] = 0x80;
  packet[1] = payloadType;
  packet[2] = seq >> 8;
  packet[3] = seq & 0xff;
  new DataView(packet.buffer).setUint32(4, timestamp);
  new DataView(packet.buffer).setUint32(8, ssrc);
  packet.set(payload, 12);
  return packet;
}

describe('RtpSession', () => {
  it('binds an even RTP port with RTCP on the next one, and returns them on close', async () => {
    const allocator = newAllocator(2);
    const options = { allocator, bindAddress: '127.0.0.1', codec: 'PCMU', payloadType: 0 } as const;
    const a = await RtpSession.open(options);
    const b = await RtpSession.open(options);
    expect(a.localPort % 2).toBe(0);
    expect(b.localPort).not.toBe(a.localPort);
    await expect(RtpSession.open(options)).rejects.toMatchObject({ code: 'RTP_NO_PORT' });
    // The RTCP port is bound too: a second bind on it fails.
    const probe = await UdpPeer.open(a.localPort + 1).catch(() => undefined);
    expect(probe).toBeUndefined();
    await a.close();
    await b.close();
    expect(allocator.allocated).toBe(0);
  });

  it('sends 20 ms PCMU frames with consecutive sequence numbers, timestamps and one marker', async () => {
    const { session } = await openSession();
    const peer = await peerPair();
    session.setRemote({ address: '127.0.0.1', port: peer.rtp.port });
    const pcm = Int16Array.from({ length: 160 }, (_, i) => Math.round(8000 * Math.sin(i / 5)));
    for (let i = 0; i < 3; i++) {
      session.sendFrame(pcm);
    }
    await peer.rtp.waitFor(3);
    const views = peer.rtp.received.map(({ data }) => {
      const view = new RtpPacketView();
      expect(parseRtpPacket(data, view)).toBeNull();
      return view;
    });
    expect(views.map((v) => v.marker)).toEqual([true, false, false]);
    expect(views.map((v) => v.payloadType)).toEqual([0, 0, 0]);
    expect(views.map((v) => v.payloadLength)).toEqual([160, 160, 160]);
    expect(views[1]!.sequenceNumber).toBe((views[0]!.sequenceNumber + 1) & 0xffff);
    expect(views[2]!.timestamp).toBe((views[0]!.timestamp + 320) >>> 0);
    expect(new Set(views.map((v) => v.ssrc))).toEqual(new Set([session.ssrc]));
    const decoded = new Int16Array(160);
    decodeMuLaw(peer.rtp.received[0]!.data, decoded, 12, 160);
    for (let i = 0; i < 160; i++) {
      expect(Math.abs(decoded[i]! - pcm[i]!)).toBeLessThan(300);
    }
    expect(session.stats.packetsSent).toBe(3);
  });

  it.skipIf(!existsSync(join(SIPP, 'g711a.pcap')))(
    "plays SIPp's 30 ms G.711 A-law capture through the jitter buffer as 20 ms frames",
    async () => {
      const { session, scheduler } = await openSession({ codec: 'PCMA', payloadType: 8 });
      const packets = readPcapUdp(join(SIPP, 'g711a.pcap'));
      const startMs = packets[0]!.timeMs;
      let audioFrames = 0;
      let next = 0;
      for (let tick = 0; tick < 600; tick++) {
        scheduler.nowMs = tick * 20;
        while (next < packets.length && packets[next]!.timeMs - startMs <= scheduler.nowMs) {
          session.receiveRtp(packets[next]!.payload, '127.0.0.1', 5000);
          next++;
        }
        if (session.pullFrame().kind === 'audio') {
          audioFrames++;
        }
      }
      expect(session.stats.audioPacketsReceived).toBe(packets.length);
      // 236 packets of 30 ms are 354 frames of 20 ms; the last few 20 ms may sit in the buffer.
      expect(audioFrames).toBeGreaterThanOrEqual(350);
      expect(audioFrames).toBeLessThanOrEqual(354);
      expect(session.jitterBufferStats.lost).toBe(0);
    },
  );

  it('latches to the source the peer sends from and ignores others until it goes quiet', async () => {
    const { session, scheduler } = await openSession({ relatchAfterMs: 1000 });
    const sdpPeer = await peerPair();
    const natPeer = await peerPair();
    const other = await peerPair();
    session.setRemote({ address: '127.0.0.1', port: sdpPeer.rtp.port });
    const silence = new Uint8Array(160).fill(0xff);
    // The peer's packets come from its NAT mapping, not the SDP address.
    await natPeer.rtp.send(rtp(1, 160, 0, silence), session.localPort);
    await other.rtp.send(rtp(1, 160, 0, silence, 99), session.localPort);
    const waitStats = async (check: () => boolean): Promise<void> => {
      while (!check()) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    await waitStats(() => session.stats.packetsReceived === 2);
    expect(session.isLatched).toBe(true);
    expect(session.remoteEndpoint).toEqual({ address: '127.0.0.1', port: natPeer.rtp.port });
    expect(session.stats.ignoredSourcePackets).toBe(1);
    session.sendFrame(new Int16Array(160));
    await natPeer.rtp.waitFor(1);
    expect(sdpPeer.rtp.received).toHaveLength(0);
    // The latched source goes quiet for longer than relatchAfterMs: another may take over.
    scheduler.nowMs += 1500;
    await other.rtp.send(rtp(2, 320, 0, silence, 99), session.localPort);
    await waitStats(() => session.stats.packetsReceived === 3);
    expect(session.stats.relatches).toBe(1);
    expect(session.stats.ssrcChanges).toBe(1);
    expect(session.remoteEndpoint!.port).toBe(other.rtp.port);
  });

  it('reports RTP inactivity once with a clear reason, and not while the peer holds the call', async () => {
    const reasons: unknown[] = [];
    const { session, scheduler } = await openSession({
      inactivityTimeoutMs: 5000,
      onInactive: (inactivity) => reasons.push(inactivity),
    });
    session.setReceiving(false);
    scheduler.advance(20_000);
    expect(reasons).toEqual([]);
    session.setReceiving(true);
    session.receiveRtp(rtp(1, 0, 0, new Uint8Array(160)), '127.0.0.1', 4000);
    scheduler.advance(4000);
    expect(reasons).toEqual([]);
    scheduler.advance(20_000);
    expect(reasons).toEqual([{ reason: 'rtp-timeout', silentForMs: 5000, packetsReceived: 1 }]);
  });

  it.skipIf(!existsSync(join(SIPP, 'dtmf_2833_5.pcap')))(
    'ignores audio and keys while no media is expected (early media before an answer)',
    async () => {
      const digits: string[] = [];
      const { session } = await openSession({ onDtmf: (event) => digits.push(event.digit) });
      session.setReceiving(false);
      const loud = new Uint8Array(160).fill(0x10); // µ-law: a loud sample
      for (let seq = 1; seq <= 10; seq++) {
        session.receiveRtp(rtp(seq, seq * 160, 0, loud), '127.0.0.1', 4000);
      }
      for (const packet of readPcapUdp(join(SIPP, 'dtmf_2833_5.pcap'))) {
        session.receiveRtp(packet.payload, '127.0.0.1', 4000);
      }
      expect(session.stats.ignoredWhileNotReceiving).toBeGreaterThan(10);
      expect(session.stats.audioPacketsReceived).toBe(0);
      expect(digits).toEqual([]);
      expect(session.isLatched).toBe(true);
      for (let i = 0; i < 10; i++) {
        expect(session.pullFrame().kind).not.toBe('audio');
      }
      session.setReceiving(true);
      for (let seq = 11; seq <= 20; seq++) {
        session.receiveRtp(rtp(seq, seq * 160, 0, loud), '127.0.0.1', 4000);
      }
      expect(session.stats.audioPacketsReceived).toBe(10);
      const kinds = Array.from({ length: 10 }, () => session.pullFrame().kind);
      expect(kinds).toContain('audio');
    },
  );

  it.skipIf(!existsSync(join(SIPP, 'dtmf_2833_5.pcap')))(
    'emits each RFC 4733 digit of the SIPp captures once',
    async () => {
      const digits: string[] = [];
      const { session } = await openSession({ onDtmf: (event) => digits.push(event.digit) });
      for (const name of ['dtmf_2833_5.pcap', 'dtmf_2833_star.pcap', 'dtmf_2833_9.pcap']) {
        for (const packet of readPcapUdp(join(SIPP, name))) {
          session.receiveRtp(packet.payload, '127.0.0.1', 49_176);
        }
      }
      expect(digits).toEqual(['5', '*', '9']);
      expect(session.stats.dtmfReceived).toBe(3);
    },
  );

  it('sends a digit in place of audio: start with marker, updates, three ends, then audio', async () => {
    const { session } = await openSession();
    const peer = await peerPair();
    session.setRemote({ address: '127.0.0.1', port: peer.rtp.port });
    const frame = new Int16Array(160);
    session.sendFrame(frame);
    expect(session.sendDtmf('9', 60)).toBe(true);
    for (let i = 0; i < 7; i++) {
      session.sendFrame(frame);
    }
    await peer.rtp.waitFor(8);
    const views = peer.rtp.received.map(({ data }) => {
      const view = new RtpPacketView();
      parseRtpPacket(data, view);
      return { ...view, payload: [...data.subarray(view.payloadOffset)] };
    });
    expect(views.map((v) => v.payloadType)).toEqual([0, 101, 101, 101, 101, 101, 101, 0]);
    expect(views.map((v) => v.marker)).toEqual([
      true,
      true,
      false,
      false,
      false,
      false,
      false,
      true,
    ]);
    const eventTimestamp = (views[0]!.timestamp + 160) >>> 0;
    expect(views.slice(1, 7).every((v) => v.timestamp === eventTimestamp)).toBe(true);
    expect(views.slice(4, 7).map((v) => v.payload)).toEqual([
      [9, 0x8a, 1, 224],
      [9, 0x8a, 1, 224],
      [9, 0x8a, 1, 224],
    ]);
    expect(views[7]!.timestamp).toBe((views[0]!.timestamp + 7 * 160) >>> 0);
    const seqs = views.map((v) => v.sequenceNumber);
    expect(seqs.every((seq, i) => i === 0 || seq === ((seqs[i - 1]! + 1) & 0xffff))).toBe(true);
  });

  it('sends RTCP reports about every 5 s with loss and jitter, and a BYE on close', async () => {
    const remoteByes: (string | undefined)[] = [];
    const { session, scheduler } = await openSession({
      onRemoteBye: (reason) => remoteByes.push(reason),
    });
    const peer = await peerPair();
    session.setRemote({ address: '127.0.0.1', port: peer.rtp.port });
    const silence = new Uint8Array(160).fill(0xff);
    for (let seq = 1; seq <= 50; seq++) {
      scheduler.advance(20);
      if (seq !== 10) {
        session.receiveRtp(rtp(seq, seq * 160, 0, silence, 777), '127.0.0.1', peer.rtp.port);
      }
    }
    session.sendFrame(new Int16Array(160));
    scheduler.advance(1500); // random 0.5: the first report at 2.5 s
    await peer.rtcp.waitFor(1);
    const first = parseRtcpCompound(peer.rtcp.received[0]!.data);
    expect(first.ok).toBe(true);
    if (!first.ok) {
      return;
    }
    expect(first.packets.map((p) => p.type)).toEqual(['sr', 'sdes']);
    const sr = first.packets[0]!;
    if (sr.type !== 'sr') {
      return;
    }
    expect(sr.packetCount).toBe(1);
    expect(sr.octetCount).toBe(160);
    expect(sr.reports).toHaveLength(1);
    expect(sr.reports[0]).toMatchObject({ ssrc: 777, cumulativeLost: 1, fractionLost: 5 });
    scheduler.advance(4999);
    expect(session.stats.rtcpSent).toBe(1);
    scheduler.advance(1);
    await peer.rtcp.waitFor(2);
    const second = parseRtcpCompound(peer.rtcp.received[1]!.data);
    expect(second.ok && second.packets[0]!.type).toBe('rr'); // nothing sent since the SR
    // RTCP from another host than the latched RTP source is ignored (no spoofed BYE).
    const byeFromElsewhere = Buffer.from([
      0x80, 201, 0, 1, 0, 0, 0, 9, 0x81, 203, 0, 1, 0, 0, 0, 9,
    ]);
    session.receiveRtcp(byeFromElsewhere, '127.0.0.2', 9999);
    expect(session.stats.rtcpReceived).toBe(0);
    session.receiveRtcp(byeFromElsewhere, '127.0.0.1', peer.rtcp.port);
    expect(session.stats.rtcpReceived).toBe(1);
    expect(remoteByes).toEqual([undefined]);
    await session.close('hangup');
    await peer.rtcp.waitFor(3);
    const bye = parseRtcpCompound(peer.rtcp.received[2]!.data);
    expect(bye.ok && bye.packets.at(-1)).toEqual({
      type: 'bye',
      ssrcs: [session.ssrc],
      reason: 'hangup',
    });
  });

  it('counts invalid packets and packets of payload types not negotiated', async () => {
    const { session } = await openSession();
    session.receiveRtp(Uint8Array.from([0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]), '127.0.0.1', 1);
    session.receiveRtp(rtp(1, 0, 18, new Uint8Array(20)), '127.0.0.1', 1);
    session.receiveRtp(rtp(1, 0, 101, new Uint8Array(2)), '127.0.0.1', 1);
    expect(session.stats).toMatchObject({
      invalidPackets: 2,
      unexpectedPayloadType: 1,
      lastInvalidCode: 'RTP_BAD_EVENT',
    });
    expect(session.isLatched).toBe(true); // the event packet was well-formed RTP
  });

  it('receives and plays out a long run of packets in order, losing none', async () => {
    const { session, scheduler } = await openSession();
    const packet = rtp(0, 0, 0, new Uint8Array(160).fill(0x55), 5);
    const view = new DataView(packet.buffer);
    let seq = 0;
    // Allocation per packet is a speed property, measured in bench/, not asserted here (a heap
    // reading without a forced GC flakes under load).
    for (let i = 0; i < 120_000; i++) {
      seq = (seq + 1) & 0xffff;
      view.setUint16(2, seq);
      view.setUint32(4, (seq * 160) >>> 0);
      scheduler.nowMs += 20;
      session.receiveRtp(packet, '127.0.0.1', 4000);
      session.pullFrame();
    }
    expect(session.stats.audioPacketsReceived).toBe(120_000);
    expect(session.jitterBufferStats.lost).toBe(0);
  });
});
