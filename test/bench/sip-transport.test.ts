/**
 * The harness's SIP/RTP caller against Parla's real SIP stack (test/calls/sip-call-harness.ts:
 * UDP SIP on 127.0.0.1, RTP, a worker running the echo handler): INVITE with a PCMU offer → 200
 * → ACK; G.711 RTP both ways (the echoed tone comes back decoded); BYE from either side.
 */
import { describe, expect, it } from 'vitest';
import { HarnessError } from '../../bench/harness/caller-transport.js';
import {
  SIP_SAMPLE_RATE_HZ,
  SipCallerTransport,
  sipTransportFactory,
} from '../../bench/harness/sip-transport.js';
import { useSipHarness } from '../calls/sip-call-harness.js';

const h = useSipHarness();

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) {
      throw new Error('condition not met in time');
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function collector() {
  const got = { samples: 0, loudSamples: 0, closes: [] as string[] };
  return {
    got,
    handlers: {
      onAudio: (samples: Int16Array) => {
        got.samples += samples.length;
        for (const sample of samples) {
          if (Math.abs(sample) > 2000) {
            got.loudSamples++;
          }
        }
      },
      onMessage: () => undefined,
      onClose: (reason: string) => got.closes.push(reason),
    },
  };
}

/** A 440 Hz tone in 20 ms frames at 8 kHz. */
function toneFrames(count: number): Int16Array[] {
  return Array.from({ length: count }, (_frame, k) =>
    Int16Array.from({ length: 160 }, (_sample, i) =>
      Math.round(Math.sin((2 * Math.PI * 440 * (k * 160 + i)) / 8000) * 8000),
    ),
  );
}

async function sendPaced(transport: SipCallerTransport, frames: Int16Array[]): Promise<void> {
  for (const frame of frames) {
    transport.sendAudio(frame);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('SipCallerTransport', () => {
  it('places a call, hears its audio echoed over RTP and hangs up with BYE', async () => {
    const { phoneNumberId } = await h.phoneNumber({ number: '+15550101' });
    const transport = new SipCallerTransport({
      sipHost: '127.0.0.1',
      sipPort: h.sip.port,
      number: '+15550101',
      fromNumber: '+19990001',
    });
    const { got, handlers } = collector();
    const call = await transport.connect(handlers);
    expect(call).toEqual({
      callId: expect.stringMatching(/^sip:/),
      sampleRateHz: SIP_SAMPLE_RATE_HZ,
    });
    await sendPaced(transport, toneFrames(50));
    await until(() => got.loudSamples > 2000);
    expect(transport.ignoredPackets).toBe(0);
    await transport.close();
    await transport.close();
    await until(async () => (await h.callsOf(phoneNumberId))[0]?.status === 'ended');
    const [stored] = await h.callsOf(phoneNumberId);
    expect(stored).toMatchObject({
      type: 'inboundPhoneCall',
      endedReason: 'customer-ended-call',
      customer: { number: '+19990001' },
    });
    expect(got.closes).toEqual([]);
  });

  it('reports a BYE from Parla as the call closing', async () => {
    const { phoneNumberId } = await h.phoneNumber({ number: '+15550102' });
    const transport = new SipCallerTransport({
      sipHost: '127.0.0.1',
      sipPort: h.sip.port,
      number: '+15550102',
      fromNumber: '+19990002',
    });
    const { got, handlers } = collector();
    await transport.connect(handlers);
    await sendPaced(transport, toneFrames(5));
    const [stored] = await h.callsOf(phoneNumberId);
    h.engine.session(stored!.id as string)!.end('assistant-ended-call');
    await until(() => got.closes.length > 0);
    expect(got.closes).toEqual(['the far side sent BYE']);
    await transport.close();
  });

  it('fails to connect with a clear error when the number is not Parla’s', async () => {
    const transport = new SipCallerTransport({
      sipHost: '127.0.0.1',
      sipPort: h.sip.port,
      number: '+15559999',
      fromNumber: '+19990003',
    });
    const error = await transport.connect(collector().handlers).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HarnessError);
    // 403, or a 401 digest challenge (which the harness does not answer): a failure either way.
    expect(error).toMatchObject({
      code: 'ERR_BENCH_CONNECT',
      message: expect.stringMatching(/^INVITE answered [4-6]\d\d /),
    });
    await transport.close();
  });

  it('refuses bad settings before any network work', () => {
    expect(
      () =>
        new SipCallerTransport({ sipHost: '127.0.0.1', sipPort: 0, number: '1', fromNumber: '2' }),
    ).toThrow(HarnessError);
    expect(() => sipTransportFactory({ target: 'parla.example:5060', number: '1' })).toThrow(
      HarnessError,
    );
    expect(() => sipTransportFactory({ target: '127.0.0.1:5060', number: 'bob' })).toThrow(
      HarnessError,
    );
    const factory = sipTransportFactory({ target: '127.0.0.1:5060', number: '+15550100' });
    expect(factory(0)).toBeInstanceOf(SipCallerTransport);
  });
});
