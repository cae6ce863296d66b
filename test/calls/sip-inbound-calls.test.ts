/**
 * Inbound SIP calls with SIPp as the trunk, on the echo handler: routing and the trunk
 * allowlist, audio both ways over RTP, DTMF to user input, hang-up from either side, CANCEL
 * before answer, RTP inactivity.
 */
import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeALaw, encodeALaw } from '../../src/media/codecs/g711.js';
import { hasSipp, runSipp } from '../support/sipp.js';
import { waitFor } from './websocket-call-harness.js';
import { rtpPeer, sippArgs, useSipHarness } from './sip-call-harness.js';

const h = useSipHarness({ rtpInactivityTimeoutMs: 1500 });
const sockets: { close(): void }[] = [];
afterEach(() => sockets.splice(0).forEach((socket) => socket.close()));

let nextNumber = 1000;
const newNumber = (): string => `+1555000${nextNumber++}`;
/** A free-ish even media port for SIPp per test (the default 6000 would collide across runs). */
const mediaPort = (): string => String(20_000 + 2 * Math.floor(Math.random() * 4000));

async function endedCall(phoneNumberId: string): Promise<Record<string, unknown>> {
  let call: Record<string, unknown> | undefined;
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    call = (await h.callsOf(phoneNumberId))[0];
    if (call?.status === 'ended' && h.observers.get(String(call.id))?.ended !== undefined) {
      return call;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`call not ended: ${JSON.stringify(call)}`);
}

/** 20 ms RTP packets of a 1 kHz A-law tone, payload type 8. */
function tonePacket(sequence: number, ssrc: number): Buffer {
  const samples = new Int16Array(160);
  for (let i = 0; i < 160; i++) {
    samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 1000 * (sequence * 160 + i)) / 8000));
  }
  const packet = Buffer.alloc(12 + 160);
  packet[0] = 0x80;
  packet[1] = 8;
  packet.writeUInt16BE(sequence & 0xffff, 2);
  packet.writeUInt32BE((sequence * 160) >>> 0, 4);
  packet.writeUInt32BE(ssrc, 8);
  encodeALaw(samples, packet.subarray(12));
  return packet;
}

describe.skipIf(!hasSipp)('inbound SIP calls (SIPp trunk, echo handler)', () => {
  it(
    'answers, echoes the caller audio back over RTP and ends on the caller BYE',
    { timeout: 40_000 },
    async () => {
      const number = newNumber();
      const { phoneNumberId, assistantId } = await h.phoneNumber({ number });
      const peer = await rtpPeer();
      sockets.push(peer.socket);
      const sipp = runSipp(
        sippArgs(h, 'inbound-rtp-peer.xml', ['-s', number, '-set', 'rtpport', String(peer.port)]),
        tmpdir(),
      );
      await waitFor(() => h.sip.calls.liveCalls > 0, 10_000, 'the call to be answered');
      const call = (await h.callsOf(phoneNumberId))[0]!;
      const parlaPort = await waitForParlaRtpPort(peer);
      // A tone from the caller's RTP socket, paced at 20 ms, until SIPp hangs up.
      let done = false;
      void sipp.then(() => (done = true));
      for (let sequence = 0; !done; sequence++) {
        peer.socket.send(tonePacket(sequence, 0x1234), parlaPort, '127.0.0.1');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const result = await sipp;
      expect(result.code, result.output).toBe(0);
      const ended = await endedCall(phoneNumberId);
      expect(ended).toMatchObject({
        type: 'inboundPhoneCall',
        phoneCallTransport: 'sip',
        phoneNumberId,
        assistantId,
        customer: { number: '+15550001111' },
        endedReason: 'customer-ended-call',
      });
      expect(h.observers.get(call.id as string)!.statuses.map((c) => c.status)).toEqual([
        'ringing',
        'in-progress',
        'ended',
      ]);
      // The echo came back as A-law RTP carrying sound (not only comfort silence).
      const loud = peer.packets.filter(
        (packet) => packet.length === 172 && (packet[1]! & 0x7f) === 8 && energy(packet) > 1000,
      );
      expect(loud.length).toBeGreaterThan(25);
    },
  );

  it('plays G.711 from the pcap SIPp ships into the call', { timeout: 40_000 }, async () => {
    const number = newNumber();
    const { phoneNumberId } = await h.phoneNumber({ number });
    const result = await runSipp(
      sippArgs(h, 'inbound-pcap.xml', ['-s', number, '-mp', mediaPort()]),
      tmpdir(),
    );
    expect(result.code, result.output).toBe(0);
    const ended = await endedCall(phoneNumberId);
    expect(ended.endedReason).toBe('customer-ended-call');
    const observer = h.observers.get(ended.id as string)!;
    // About 3 s of speech at 8 kHz reached the worker, and it was not silence.
    expect(observer.audio.user).toBeGreaterThan(8000 * 2);
    expect(observer.energy.user / observer.audio.user).toBeGreaterThan(50);
  });

  it(
    'turns RFC 2833 digits into user input per the keypadInputPlan',
    { timeout: 40_000 },
    async () => {
      const number = newNumber();
      const { phoneNumberId } = await h.phoneNumber({
        number,
        assistant: { keypadInputPlan: { enabled: true, timeoutSeconds: 0.5 } },
      });
      const result = await runSipp(
        sippArgs(h, 'inbound-dtmf.xml', ['-s', number, '-mp', mediaPort()]),
        tmpdir(),
      );
      expect(result.code, result.output).toBe(0);
      const ended = await endedCall(phoneNumberId);
      const controls = h.observers
        .get(ended.id as string)!
        .events.filter((event) => event.type === 'control-received')
        .map((event) => event.message);
      expect(controls).toEqual([
        {
          type: 'add-message',
          message: { role: 'user', content: '1' },
          triggerResponseEnabled: true,
        },
      ]);
    },
  );

  it(
    'takes SIP INFO digits and a re-INVITE putting the call on hold',
    { timeout: 40_000 },
    async () => {
      const number = newNumber();
      const { phoneNumberId } = await h.phoneNumber({
        number,
        assistant: { keypadInputPlan: { enabled: true, timeoutSeconds: 0 } },
      });
      const result = await runSipp(
        sippArgs(h, 'inbound-info-hold.xml', ['-s', number, '-mp', mediaPort()]),
        tmpdir(),
      );
      // SIPp fails on a BYE from Parla: on hold, the silence outlasted the inactivity timeout.
      expect(result.code, result.output).toBe(0);
      const ended = await endedCall(phoneNumberId);
      expect(ended.endedReason).toBe('customer-ended-call');
      const inputs = h.observers
        .get(ended.id as string)!
        .events.filter((event) => event.type === 'control-received')
        .map((event) => (event.message as { message: { content: string } }).message.content);
      expect(inputs).toEqual(['5']);
    },
  );

  it('takes a call over TCP', { timeout: 40_000 }, async () => {
    const number = newNumber();
    const { phoneNumberId } = await h.phoneNumber({ number });
    const result = await runSipp(
      sippArgs(h, 'inbound-pcap.xml', ['-s', number, '-mp', mediaPort(), '-t', 't1']),
      tmpdir(),
    );
    expect(result.code, result.output).toBe(0);
    const ended = await endedCall(phoneNumberId);
    expect(ended.endedReason).toBe('customer-ended-call');
    expect(h.observers.get(ended.id as string)!.energy.user).toBeGreaterThan(0);
  });

  it('sends BYE when the assistant side ends the call', { timeout: 40_000 }, async () => {
    const number = newNumber();
    const { phoneNumberId } = await h.phoneNumber({ number });
    const sipp = runSipp(
      sippArgs(h, 'inbound-wait-bye.xml', ['-s', number, '-mp', mediaPort()]),
      tmpdir(),
    );
    await waitFor(() => h.sip.calls.liveCalls > 0, 10_000, 'the call to be answered');
    const call = (await h.callsOf(phoneNumberId))[0]!;
    const session = h.engine.session(call.id as string)!;
    await waitFor(() => session.state === 'in-progress', 10_000, 'the worker to start');
    expect(session.control({ type: 'end-call' })).toEqual({ ok: true });
    const result = await sipp;
    expect(result.code, result.output).toBe(0);
    expect((await endedCall(phoneNumberId)).endedReason).toBe('assistant-ended-call');
  });

  it('ends a call whose caller sends no RTP', { timeout: 40_000 }, async () => {
    const number = newNumber();
    const { phoneNumberId } = await h.phoneNumber({ number });
    const result = await runSipp(
      sippArgs(h, 'inbound-wait-bye.xml', ['-s', number, '-mp', mediaPort()]),
      tmpdir(),
    );
    expect(result.code, result.output).toBe(0);
    expect((await endedCall(phoneNumberId)).endedReason).toBe(
      'call.in-progress.error-sip-rtp-timeout',
    );
  });

  it(
    'challenges (401) a source outside the trunk allowlist, and unknown numbers alike',
    {
      timeout: 40_000,
    },
    async () => {
      const number = newNumber();
      const { phoneNumberId } = await h.phoneNumber({ number, gatewayIp: '192.0.2.10' });
      for (const dialled of [number, '+15559999999']) {
        const result = await runSipp(
          sippArgs(h, 'inbound-401.xml', ['-s', dialled, '-mp', mediaPort()]),
          tmpdir(),
        );
        expect(result.code, result.output).toBe(0);
      }
      expect(await h.callsOf(phoneNumberId)).toEqual([]);
    },
  );

  it('answers OPTIONS keep-alives from trunks', { timeout: 20_000 }, async () => {
    const result = await runSipp(sippArgs(h, 'options.xml', ['-mp', mediaPort()]), tmpdir());
    expect(result.code, result.output).toBe(0);
  });

  it(
    'answers 480 and ends the call when the number has no assistant',
    {
      timeout: 40_000,
    },
    async () => {
      const number = newNumber();
      const { phoneNumberId } = await h.phoneNumber({ number, assistant: null });
      const result = await runSipp(
        sippArgs(h, 'inbound-480.xml', ['-s', number, '-mp', mediaPort()]),
        tmpdir(),
      );
      expect(result.code, result.output).toBe(0);
      const [call] = await h.callsOf(phoneNumberId);
      expect(call).toMatchObject({
        status: 'ended',
        endedReason: 'call-start-error-neither-assistant-nor-server-set',
      });
    },
  );
});

/** Mean absolute sample value of an A-law packet's payload. */
function energy(packet: Buffer): number {
  const samples = new Int16Array(packet.length - 12);
  decodeALaw(packet.subarray(12), samples);
  let sum = 0;
  for (const sample of samples) {
    sum += Math.abs(sample);
  }
  return sum / samples.length;
}

/** Parla's RTP port: where its first packet (silence, sent from the start) comes from. */
async function waitForParlaRtpPort(peer: Awaited<ReturnType<typeof rtpPeer>>): Promise<number> {
  let port = 0;
  peer.socket.once('message', (_data, info) => (port = info.port));
  await waitFor(() => port !== 0, 5000, 'RTP from Parla');
  return port;
}
