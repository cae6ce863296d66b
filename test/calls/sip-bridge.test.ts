/**
 * The bridge a refused REFER falls back to, over real SIP and RTP on loopback: Parla's user
 * agent has a caller (a far end it called) with running call media; the bridge dials a second
 * far end, takes the caller over, relays audio both ways, and passes a BYE from one leg to the
 * other. A destination that does not answer leaves the call as it was.
 */
import { createSocket, type Socket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { SipBridges } from '../../src/calls/sip-bridge.js';
import { SipCallMedia } from '../../src/calls/sip-call-media.js';
import { SipTelephonyLeg } from '../../src/calls/sip-telephony-leg.js';
import type { TransferOutcome } from '../../src/calls/telephony-leg.js';
import type { Doc } from '../../src/store/resource-store.js';
import { RtpPortAllocator } from '../../src/transports/rtp/rtp-port-allocator.js';
import { RtpSession } from '../../src/transports/rtp/rtp-session.js';
import { SipDialogLayer, type DialogEndReason } from '../../src/transports/sip/dialog-layer.js';
import type { SipDialog } from '../../src/transports/sip/dialog.js';
import { SipUserAgent } from '../../src/transports/sip/sip-user-agent.js';
import { SipUdpTransport } from '../../src/transports/sip/transport-udp.js';
import { keysIn } from '../e2e/sip-transfer-support.js';
import { pcmuPacket } from './sip-call-harness.js';

const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    await cleanup();
  }
});

interface MediaPeer {
  socket: Socket;
  port: number;
  packets: Buffer[];
  /** Where the packets came from (Parla's RTP port for this leg). */
  source?: number;
}

async function mediaPeer(): Promise<MediaPeer> {
  const socket = createSocket('udp4');
  const peer: MediaPeer = { socket, port: 0, packets: [] };
  socket.on('message', (data, source) => {
    peer.packets.push(data);
    peer.source ??= source.port;
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  peer.port = socket.address().port;
  cleanups.push(() => new Promise<void>((resolve) => socket.close(() => resolve())));
  return peer;
}

/** A far end: accepts INVITEs with a PCMU answer (or rejects them), answers REFER as told. */
interface FarEnd {
  layer: SipDialogLayer;
  port: number;
  media: MediaPeer;
  dialogs: SipDialog[];
  ended: DialogEndReason[];
  invites: number;
  /** Bodies of the INFO requests it got (DTMF when telephone-event was not negotiated). */
  infos: string[];
}

async function startFarEnd(
  options: { reject?: number; referStatus?: number; telephoneEvent?: boolean } = {},
): Promise<FarEnd> {
  const media = await mediaPeer();
  const slot: { layer?: SipDialogLayer } = {};
  const transport = await SipUdpTransport.listen({
    host: '127.0.0.1',
    port: 0,
    onMessage: (message, source) => slot.layer?.receive(message, source),
  });
  const sdp = [
    'v=0',
    'o=far 1 1 IN IP4 127.0.0.1',
    's=-',
    'c=IN IP4 127.0.0.1',
    't=0 0',
    `m=audio ${media.port} RTP/AVP 0${options.telephoneEvent === true ? ' 101' : ''}`,
    'a=rtpmap:0 PCMU/8000',
    ...(options.telephoneEvent === true ? ['a=rtpmap:101 telephone-event/8000'] : []),
    '',
  ].join('\r\n');
  const far: FarEnd = {
    layer: undefined as unknown as SipDialogLayer,
    port: transport.port,
    media,
    dialogs: [],
    ended: [],
    invites: 0,
    infos: [],
  };
  const layer = new SipDialogLayer({
    transports: [transport],
    onInvite: (invite) => {
      far.invites++;
      if (options.reject !== undefined) {
        layer.reject(invite, options.reject);
        return;
      }
      const dialog = layer.accept(invite, {
        body: Buffer.from(sdp),
        contentType: 'application/sdp',
      });
      if (dialog !== undefined) {
        far.dialogs.push(dialog);
      }
    },
    onDialogRequest: (dialog, request, transaction) => {
      if (request.method === 'INFO') {
        far.infos.push(request.body.toString('utf8'));
      }
      layer.respond(
        dialog,
        request,
        transaction,
        request.method === 'REFER' ? (options.referStatus ?? 405) : 200,
      );
    },
    onDialogEnded: (_dialog, reason) => far.ended.push(reason),
  });
  far.layer = layer;
  slot.layer = layer;
  cleanups.push(async () => {
    layer.close();
    await transport.close();
  });
  return far;
}

const soundOf = (value: number) => (packet: Buffer) =>
  packet.length === 172 && packet.subarray(12).every((byte) => byte === value);

/** The RFC 4733 packets of one key (start with the marker, two updates, three end copies). */
function keyPackets(digit: string, firstSeq: number, timestamp: number): Buffer[] {
  const event = '0123456789*#ABCD'.indexOf(digit);
  return [160, 320, 480, 640, 640, 640].map((duration, index) => {
    const packet = Buffer.alloc(16);
    packet[0] = 0x80;
    packet[1] = (index === 0 ? 0x80 : 0) | 101;
    packet.writeUInt16BE((firstSeq + index) & 0xffff, 2);
    packet.writeUInt32BE(timestamp >>> 0, 4);
    packet.writeUInt32BE(0x0badbeef, 8);
    packet[12] = event;
    packet[13] = (index >= 3 ? 0x80 : 0) | 10;
    packet.writeUInt16BE(duration, 14);
    return packet;
  });
}

function sendAll(socket: Socket, packets: readonly Buffer[], port: number): void {
  for (const packet of packets) {
    socket.send(packet, port, '127.0.0.1');
  }
}

/** Parla's side: a user agent whose dialog events go to the bridges, and a call to `caller`. */
async function parlaCall(caller: FarEnd) {
  const allocator = new RtpPortAllocator({ minPort: 47_000, maxPort: 47_999 });
  const bridges = new SipBridges({
    allocator,
    rtpBindAddress: '127.0.0.1',
    mediaAddress: '127.0.0.1',
    log: () => {},
  });
  const ended: DialogEndReason[] = [];
  const agent = await SipUserAgent.start({
    host: '127.0.0.1',
    port: 0,
    tcp: false,
    handler: {
      onInvite: () => {},
      onCancel: () => {},
      onDialogEnded: (dialog, reason) => {
        ended.push(reason);
        bridges.onDialogEnded(dialog);
      },
      onOffer: (dialog, offer) => bridges.onOffer(dialog, offer),
      // As the SIP server does for a dialog a bridge owns.
      onInfoDtmf: (dialog, digit) => bridges.onInfoDtmf(dialog, digit),
    },
  });
  bridges.attach(agent);
  cleanups.push(async () => {
    bridges.close();
    await agent.close();
  });
  const call = await agent.dialogs.invite({
    target: { transport: 'UDP', address: '127.0.0.1', port: caller.port },
    requestUri: `sip:+15550123@127.0.0.1:${caller.port}`,
    from: '<sip:+15550100@127.0.0.1>',
    to: `<sip:+15550123@127.0.0.1:${caller.port}>`,
  }).result;
  if (!call.ok) {
    throw new Error(`the caller did not answer: ${call.status}`);
  }
  const rtp: RtpSession = await RtpSession.open({
    allocator,
    bindAddress: '127.0.0.1',
    remote: { address: '127.0.0.1', port: caller.media.port },
    codec: 'PCMU',
    payloadType: 0,
    telephoneEventPayloadType: 101,
    // As the call layer does: a bridged caller's keys go to the bridge, else to the keypad.
    onDtmf: (event) => {
      if (!bridges.relayDtmf(rtp, event)) {
        counts.keypad.push(event.digit);
      }
    },
  });
  const counts = { callerFrames: 0, closes: 0, released: 0, keypad: [] as string[] };
  const media = new SipCallMedia({
    rtp,
    onCallerAudio: () => counts.callerFrames++,
    onClose: () => counts.closes++,
  });
  media.start();
  cleanups.push(() => media.stop());
  let endCall: () => void = () => {};
  const ended$ = new Promise<void>((resolve) => (endCall = resolve));
  const leg = {
    dialog: call.dialog,
    rtp,
    media,
    local: {
      address: '127.0.0.1',
      port: rtp.localPort,
      codecs: [],
      telephoneEvent: false,
      ptimeMs: 20,
      sessionId: '1',
      sessionVersion: 1,
    },
    lastSdp: Buffer.alloc(0),
    ended: ended$,
    release: () => counts.released++,
  };
  return { agent, bridges, leg, counts, ended, endCall };
}

function routeTo(far: FarEnd) {
  const target = { transport: 'UDP' as const, address: '127.0.0.1', port: far.port };
  const gateway = { target, host: '127.0.0.1', port: far.port };
  return {
    ok: true as const,
    trunk: { ...gateway, gateways: [gateway], leadingPlus: false },
    attempts: [{ target, requestUri: `sip:15550199@127.0.0.1:${far.port}` }],
    from: '<sip:+15550100@127.0.0.1>',
  };
}

const destination: Doc = { type: 'number', number: '+15550199' };

describe('SipBridges', () => {
  it('relays the caller to the answered destination and passes the BYE on', async () => {
    const caller = await startFarEnd();
    const callee = await startFarEnd();
    const parla = await parlaCall(caller);
    const outcome = await parla.bridges.bridge(parla.leg, routeTo(callee), destination);
    expect(outcome).toEqual({ ok: true });
    expect(parla.counts.released).toBe(1);
    expect(parla.bridges.size).toBe(1);
    expect(parla.bridges.owns(parla.leg.dialog)).toBe(true);
    // The call's media clock no longer pulls the caller's audio, and its close hangs up nothing.
    const pulled = parla.counts.callerFrames;
    parla.leg.media.close(1000, 'assistant-forwarded-call');
    expect(parla.counts.closes).toBe(0);
    // Both far ends talk (once they know where to): each hears the other's sound.
    let seq = 0;
    const talk = setInterval(() => {
      seq++;
      caller.media.socket.send(pcmuPacket(seq, 0x2a), parla.leg.rtp.localPort, '127.0.0.1');
      if (callee.media.source !== undefined) {
        callee.media.socket.send(pcmuPacket(seq, 0x3c), callee.media.source, '127.0.0.1');
      }
    }, 20);
    try {
      await expect
        .poll(() => callee.media.packets.filter(soundOf(0x2a)).length, { timeout: 10_000 })
        .toBeGreaterThan(10);
      await expect
        .poll(() => caller.media.packets.filter(soundOf(0x3c)).length, { timeout: 10_000 })
        .toBeGreaterThan(10);
    } finally {
      clearInterval(talk);
    }
    expect(parla.counts.callerFrames).toBe(pulled);
    // The destination hangs up: the caller gets our BYE.
    await callee.layer.bye(callee.dialogs[0]!);
    await expect.poll(() => caller.ended, { timeout: 10_000 }).toEqual(['remote-bye']);
    expect(parla.bridges.size).toBe(0);
    expect(parla.bridges.owns(parla.leg.dialog)).toBe(false);
  });

  it('hangs up the destination when the caller hangs up', async () => {
    const caller = await startFarEnd();
    const callee = await startFarEnd();
    const parla = await parlaCall(caller);
    expect(await parla.bridges.bridge(parla.leg, routeTo(callee), destination)).toEqual({
      ok: true,
    });
    await caller.layer.bye(caller.dialogs[0]!);
    await expect.poll(() => callee.ended, { timeout: 10_000 }).toEqual(['remote-bye']);
    expect(parla.bridges.size).toBe(0);
  });

  it('leaves the call as it was when the destination is busy', async () => {
    const caller = await startFarEnd();
    const callee = await startFarEnd({ reject: 486 });
    const parla = await parlaCall(caller);
    const outcome = await parla.bridges.bridge(parla.leg, routeTo(callee), destination);
    expect(outcome).toMatchObject({ ok: false, code: 'transfer-failed' });
    expect(outcome.ok ? '' : outcome.message).toContain('486');
    expect(callee.invites).toBe(1);
    expect(parla.counts.released).toBe(0);
    expect(parla.bridges.size).toBe(0);
    // The call's media clock still runs and the caller's dialog is up.
    const pulled = parla.counts.callerFrames;
    await expect.poll(() => parla.counts.callerFrames, { timeout: 5000 }).toBeGreaterThan(pulled);
    expect(parla.leg.dialog.state).toBe('confirmed');
    expect(caller.ended).toEqual([]);
  });
});

describe('SipBridges and DTMF', () => {
  const withExtension: Doc = { type: 'number', number: '+15550199', extension: '1w2' };

  it('keys the extension once the destination answers, then relays keys both ways as events', async () => {
    const caller = await startFarEnd();
    const callee = await startFarEnd({ telephoneEvent: true });
    const parla = await parlaCall(caller);
    expect(await parla.bridges.bridge(parla.leg, routeTo(callee), withExtension)).toEqual({
      ok: true,
    });
    // The caller presses 5 at once: it waits behind the extension (a 1 s pause, 1, 0.5 s, 2).
    sendAll(caller.media.socket, keyPackets('5', 100, 16_000), parla.leg.rtp.localPort);
    await expect.poll(() => keysIn(callee.media.packets), { timeout: 10_000 }).toBe('125');
    expect(parla.counts.keypad).toEqual([]);
    // The destination's IVR keys # back: the caller gets it as an event too.
    await expect.poll(() => callee.media.source, { timeout: 5000 }).toBeDefined();
    sendAll(callee.media.socket, keyPackets('#', 7, 32_000), callee.media.source!);
    await expect.poll(() => keysIn(caller.media.packets), { timeout: 10_000 }).toBe('#');
    expect(parla.bridges.dtmfStats).toMatchObject({ relayedAsEvents: 2, dropped: 0 });
    expect(callee.infos).toEqual([]);
  });

  it('sends the extension and the caller keys as SIP INFO to a destination without telephone-event', async () => {
    const caller = await startFarEnd();
    const callee = await startFarEnd();
    const parla = await parlaCall(caller);
    expect(await parla.bridges.bridge(parla.leg, routeTo(callee), withExtension)).toEqual({
      ok: true,
    });
    sendAll(caller.media.socket, keyPackets('9', 100, 16_000), parla.leg.rtp.localPort);
    await expect.poll(() => callee.infos.length, { timeout: 10_000 }).toBe(3);
    expect(callee.infos.map((body) => /Signal=(\S+)/.exec(body)?.[1])).toEqual(['1', '2', '9']);
    expect(callee.infos[2]).toMatch(/Duration=80\r\n/);
    expect(keysIn(callee.media.packets)).toBe('');
    // Counted once the key's length and the gap after it have passed.
    await expect
      .poll(() => parla.bridges.dtmfStats, { timeout: 5000 })
      .toMatchObject({ relayedAsInfo: 1, dropped: 0 });
  });

  it('keys a SIP INFO digit of the caller to the destination as an event', async () => {
    const caller = await startFarEnd();
    const callee = await startFarEnd({ telephoneEvent: true });
    const parla = await parlaCall(caller);
    expect(await parla.bridges.bridge(parla.leg, routeTo(callee), destination)).toEqual({
      ok: true,
    });
    const info = await caller.layer.request(caller.dialogs[0]!, 'INFO', {
      body: Buffer.from('Signal=3\r\nDuration=160\r\n'),
      contentType: 'application/dtmf-relay',
    });
    expect(info.status).toBe(200);
    await expect.poll(() => keysIn(callee.media.packets), { timeout: 10_000 }).toBe('3');
  });

  it('refuses an extension that is not a dial string before dialling', async () => {
    const caller = await startFarEnd();
    const callee = await startFarEnd();
    const parla = await parlaCall(caller);
    const outcome = await parla.bridges.bridge(parla.leg, routeTo(callee), {
      ...withExtension,
      extension: '12x',
    });
    expect(outcome).toMatchObject({ ok: false, code: 'invalid-destination' });
    expect(callee.invites).toBe(0);
  });

  it('keys of a caller who is not bridged stay with the call', async () => {
    const caller = await startFarEnd();
    const parla = await parlaCall(caller);
    sendAll(caller.media.socket, keyPackets('7', 100, 16_000), parla.leg.rtp.localPort);
    await expect.poll(() => parla.counts.keypad, { timeout: 5000 }).toEqual(['7']);
  });
});

describe('SipTelephonyLeg with a bridge', () => {
  const noRtp = { canSendDtmf: false, sendDtmfSteps: () => Promise.resolve(false) };

  it('bridges when the REFER is refused, without hanging up the caller', async () => {
    const caller = await startFarEnd({ referStatus: 405 });
    const parla = await parlaCall(caller);
    const asked: Doc[] = [];
    const leg = new SipTelephonyLeg({
      agent: parla.agent,
      dialog: parla.leg.dialog,
      rtp: noRtp,
      bridge: (target) => {
        asked.push(target);
        return Promise.resolve({ ok: true });
      },
    });
    expect(await leg.transfer(destination)).toEqual({ ok: true });
    expect(asked).toEqual([destination]);
    expect(parla.leg.dialog.state).toBe('confirmed');
    expect(caller.ended).toEqual([]);
  });

  it('reports both the refusal and why the bridge failed', async () => {
    const caller = await startFarEnd({ referStatus: 501 });
    const parla = await parlaCall(caller);
    const failed: TransferOutcome = { ok: false, code: 'transfer-failed', message: 'busy' };
    const leg = new SipTelephonyLeg({
      agent: parla.agent,
      dialog: parla.leg.dialog,
      rtp: noRtp,
      bridge: () => Promise.resolve(failed),
    });
    const outcome = await leg.transfer(destination);
    expect(outcome).toMatchObject({ ok: false, code: 'transfer-failed' });
    expect(outcome.ok ? '' : outcome.message).toMatch(/501.*bridging failed: busy/);
  });

  it('without a bridge, a refused REFER stays transfer-refused', async () => {
    const caller = await startFarEnd({ referStatus: 405 });
    const parla = await parlaCall(caller);
    const leg = new SipTelephonyLeg({ agent: parla.agent, dialog: parla.leg.dialog, rtp: noRtp });
    expect(await leg.transfer(destination)).toMatchObject({ ok: false, code: 'transfer-refused' });
  });
});
