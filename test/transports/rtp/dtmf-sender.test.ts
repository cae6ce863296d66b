import { afterEach, describe, expect, it } from 'vitest';
import {
  DtmfSender,
  parseDtmfDigits,
  type DtmfStep,
  type DtmfTick,
} from '../../../src/transports/rtp/dtmf-sender.js';
import { RtpPacketView, parseRtpPacket } from '../../../src/transports/rtp/rtp-packet.js';
import { RtpPortAllocator } from '../../../src/transports/rtp/rtp-port-allocator.js';
import { RtpSession } from '../../../src/transports/rtp/rtp-session.js';
import {
  TelephoneEventReceiver,
  type DtmfDigitEvent,
} from '../../../src/transports/rtp/telephone-event.js';
import { ManualScheduler } from '../sip/support/manual-scheduler.js';

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    await cleanup();
  }
});

function stepsOf(digits: string): readonly DtmfStep[] {
  const parsed = parseDtmfDigits(digits);
  if (!parsed.ok) {
    throw new Error(parsed.message);
  }
  return parsed.steps;
}

/** Runs the sender tick by tick into a receiver, as the RTP sender would. */
function runTicks(sender: DtmfSender, ticks: number) {
  const received: DtmfDigitEvent[] = [];
  const receiver = new TelephoneEventReceiver(8000, (event) => received.push(event));
  const kinds: DtmfTick[] = [];
  const payload = new Uint8Array(4);
  let timestamp = 1000;
  for (let i = 0; i < ticks; i++) {
    const kind = sender.next(timestamp, payload, 0);
    kinds.push(kind);
    if (kind === 'start' || kind === 'continue') {
      receiver.receive(sender.startTimestamp, payload, 0, 4);
    }
    timestamp += 160;
  }
  return { received, kinds };
}

describe('parseDtmfDigits', () => {
  it('reads keys and waits, ignoring spaces and dashes', () => {
    expect(stepsOf('1-2 w#W')).toEqual([
      { kind: 'key', digit: '1' },
      { kind: 'key', digit: '2' },
      { kind: 'wait', durationMs: 500 },
      { kind: 'key', digit: '#' },
      { kind: 'wait', durationMs: 1000 },
    ]);
    expect(stepsOf('a*')).toEqual([
      { kind: 'key', digit: 'A' },
      { kind: 'key', digit: '*' },
    ]);
  });

  it('refuses characters that are not keys, strings without keys, and overlong strings', () => {
    expect(parseDtmfDigits('12x')).toMatchObject({ ok: false, code: 'invalid-dtmf' });
    expect(parseDtmfDigits('ww')).toMatchObject({ ok: false, code: 'invalid-dtmf' });
    expect(parseDtmfDigits('')).toMatchObject({ ok: false, code: 'invalid-dtmf' });
    expect(parseDtmfDigits('1'.repeat(65))).toMatchObject({ ok: false, code: 'invalid-dtmf' });
  });
});

describe('DtmfSender', () => {
  it('sends each key as one event of 100 ms, separated by silence, then reports done', () => {
    const sender = new DtmfSender(160, 8000);
    const done: boolean[] = [];
    sender.enqueue(stepsOf('19#'), (sent) => done.push(sent));
    const { received, kinds } = runTicks(sender, 40);
    expect(received.map((e) => e.digit)).toEqual(['1', '9', '#']);
    // 5 frames of 20 ms: the duration of the end packets.
    expect(received.map((e) => e.durationMs)).toEqual([100, 100, 100]);
    // One key: start, 4 updates, 3 end packets, then 3 frames of silence.
    expect(kinds.slice(0, 11)).toEqual([
      'start',
      'continue',
      'continue',
      'continue',
      'continue',
      'continue',
      'continue',
      'continue',
      'silence',
      'silence',
      'silence',
    ]);
    expect(kinds[11]).toBe('start');
    expect(done).toEqual([true]);
    expect(sender.active).toBe(false);
    expect(kinds.at(-1)).toBe('idle');
  });

  it('waits 500 ms for w (25 silent ticks) before the next key', () => {
    const sender = new DtmfSender(160, 8000);
    sender.enqueue(stepsOf('1w2'), () => {});
    const { kinds } = runTicks(sender, 60);
    const starts = kinds.flatMap((kind, i) => (kind === 'start' ? [i] : []));
    expect(starts).toEqual([0, 8 + 3 + 25]);
  });

  it('reports false for strings dropped by cancel', () => {
    const sender = new DtmfSender(160, 8000);
    const done: boolean[] = [];
    sender.enqueue(stepsOf('123'), (sent) => done.push(sent));
    runTicks(sender, 3);
    sender.cancel();
    expect(done).toEqual([false]);
    expect(sender.active).toBe(false);
  });
});

describe('DTMF out over an RTP session', () => {
  async function openPair() {
    const minPort = 31_000 + 2 * Math.floor(Math.random() * 4000);
    const allocator = new RtpPortAllocator({ minPort, maxPort: minPort + 19 });
    const scheduler = new ManualScheduler();
    const digits: DtmfDigitEvent[] = [];
    const base = {
      allocator,
      bindAddress: '127.0.0.1',
      codec: 'PCMU' as const,
      payloadType: 0,
      telephoneEventPayloadType: 101,
      now: () => scheduler.nowMs,
      scheduler,
    };
    const sender = await RtpSession.open(base);
    const receiver = await RtpSession.open({ ...base, onDtmf: (event) => digits.push(event) });
    cleanups.push(
      () => sender.close(),
      () => receiver.close(),
    );
    sender.setRemote({ address: '127.0.0.1', port: receiver.localPort });
    const packets: (RtpPacketView & { firstByte: number })[] = [];
    const original = receiver.receiveRtp.bind(receiver);
    receiver.receiveRtp = (data, address, port) => {
      const view = new RtpPacketView();
      parseRtpPacket(data, view);
      packets.push(Object.assign(view, { firstByte: data[view.payloadOffset]! }));
      original(data, address, port);
    };
    return { sender, receiver, digits, packets };
  }

  it('round-trips a dial string through the telephone-event receiver, the voice paused', async () => {
    const { sender, digits, packets } = await openPair();
    expect(sender.canSendDtmf).toBe(true);
    const voice = new Int16Array(160).fill(8000);
    expect(sender.sendingDtmf).toBe(false);
    const sent = sender.sendDtmfSteps(stepsOf('5*0'));
    expect(sender.sendingDtmf).toBe(true);
    let settled = false;
    void sent.then(() => (settled = true));
    let ticks = 0;
    while (!settled && ticks < 200) {
      sender.sendFrame(voice);
      ticks++;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await sent).toBe(true);
    expect(sender.sendingDtmf).toBe(false);
    sender.sendFrame(voice); // the voice again
    await expect.poll(() => packets.length, { timeout: 5000 }).toBe(ticks + 1);
    await expect.poll(() => digits.map((d) => d.digit), { timeout: 5000 }).toEqual(['5', '*', '0']);
    const events = packets.filter((p) => p.payloadType === 101);
    expect(events).toHaveLength(3 * 8);
    expect(events.filter((p) => p.marker)).toHaveLength(3);
    // Every tick of the string carried an event or silence (mu-law 0xff); then the voice.
    const audio = packets.filter((p) => p.payloadType === 0);
    const silence = audio[0]!.firstByte;
    expect(audio.slice(0, -2).every((p) => p.firstByte === silence)).toBe(true);
    // The tick that finished the string, and the next, carry the voice again.
    expect(audio.slice(-2).map((p) => p.firstByte === silence)).toEqual([false, false]);
    expect(new Set(events.map((p) => p.timestamp)).size).toBe(3);
    const sequence = packets.map((p) => p.sequenceNumber);
    for (let i = 1; i < sequence.length; i++) {
      expect(sequence[i]).toBe((sequence[i - 1]! + 1) & 0xffff);
    }
  });

  it('says false without telephone-event, and when the session closes first', async () => {
    const minPort = 35_000 + 2 * Math.floor(Math.random() * 4000);
    const allocator = new RtpPortAllocator({ minPort, maxPort: minPort + 9 });
    const plain = await RtpSession.open({
      allocator,
      bindAddress: '127.0.0.1',
      codec: 'PCMA',
      payloadType: 8,
      scheduler: new ManualScheduler(),
    });
    cleanups.push(() => plain.close());
    expect(plain.canSendDtmf).toBe(false);
    expect(await plain.sendDtmfSteps(stepsOf('1'))).toBe(false);
    const { sender } = await openPair();
    const pending = sender.sendDtmfSteps(stepsOf('12'));
    await sender.close();
    expect(await pending).toBe(false);
  });
});
