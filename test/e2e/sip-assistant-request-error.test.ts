/**
 * An `{error}` reply to assistant-request spoken to the SIP caller (api-behaviour.md §3.2): the
 * error is synthesized by a local fake speaking OpenAI's speech protocol (the server's default
 * voice and key) while SIPp hears ringing, the call is answered, the speech arrives at the test's
 * own RTP socket, and Parla hangs up. A failing voice, a non-text error, a CANCEL during the
 * synthesis and a BYE during the speech each end the call as the platform does.
 */
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeALaw } from '../../src/media/codecs/g711.js';
import { useAssistantRequestNumbers } from '../calls/assistant-request-numbers.js';
import { rtpPeer, sippArgs, useSipHarness } from '../calls/sip-call-harness.js';
import { inviteOnce } from '../calls/sip-inbound-uac.js';
import { waitFor } from '../calls/websocket-call-harness.js';
import { fakePcm, FakeSpeechServer } from '../support/fake-voice-servers.js';
import { hasSipp, runSipp } from '../support/sipp.js';

const tts = new FakeSpeechServer('openai', 'sk-server');
/** Where the org's own OpenAI credential points, in one test. */
const orgTts = new FakeSpeechServer('openai', 'sk-org');
beforeAll(() => Promise.all([tts.start(), orgTts.start()]));
afterAll(() => Promise.all([tts.stop(), orgTts.stop()]));

const h = useSipHarness({
  providers: () => ({ openaiBaseUrl: tts.url, openaiApiKey: 'sk-server' }),
});
const { numberWith, serverAnswering, endedCall } = useAssistantRequestNumbers(h, 500);
const mediaPort = (): string => String(20_000 + 2 * Math.floor(Math.random() * 4000));

/** Whether an RTP packet carries A-law audio louder than a mean absolute sample of 200. */
function isLoud(packet: Buffer): boolean {
  if (packet.length <= 12 || (packet[1]! & 0x7f) !== 8) {
    return false;
  }
  const samples = new Int16Array(packet.length - 12);
  decodeALaw(packet.subarray(12), samples);
  let sum = 0;
  for (const sample of samples) {
    sum += Math.abs(sample);
  }
  return sum / samples.length > 200;
}

/** 20 ms frames the fake's 24 kHz speech of `text` fills once resampled to 8 kHz. */
function speechFrames(text: string): number {
  const samples24k = fakePcm(text, 24_000).length / 2;
  return Math.ceil(samples24k / 3 / 160);
}

/**
 * Runs `scenario` with the test's RTP socket as the caller's media; returns what the socket
 * received until SIPp ended and then `settled` resolved.
 */
async function callWithMedia(
  number: string,
  scenario: string,
  settled: () => Promise<void> = () => Promise.resolve(),
): Promise<Buffer[]> {
  const peer = await rtpPeer();
  try {
    const result = await runSipp(
      sippArgs(h, scenario, ['-s', number, '-set', 'rtpport', String(peer.port)]),
      tmpdir(),
    );
    expect(result.code, result.output).toBe(0);
    await settled();
    return [...peer.packets];
  } finally {
    peer.socket.close();
  }
}

describe.skipIf(!hasSipp)('an assistant-request error spoken to the SIP caller', () => {
  it('answers, speaks the error over RTP, then sends BYE', { timeout: 40_000 }, async () => {
    const { number, phoneNumberId } = await numberWith({
      ...serverAnswering({ body: { error: 'We are closed' } }),
      fallbackDestination: { type: 'number', number: '+15550009999' },
    });
    const requestsBefore = tts.requests.length;
    // SIPp's scenario ends once it has answered Parla's BYE.
    const packets = await callWithMedia(number, 'inbound-rtp-peer-wait-bye.xml');
    const speech = tts.requests.slice(requestsBefore);
    expect(speech).toHaveLength(1);
    expect(speech[0]!.headers.authorization).toBe('Bearer sk-server');
    expect(speech[0]!.body).toMatchObject({
      input: 'We are closed',
      voice: 'alloy',
      response_format: 'pcm',
    });
    const loud = packets.filter(isLoud).length;
    expect(loud).toBeGreaterThanOrEqual(1);
    expect(loud).toBeLessThanOrEqual(speechFrames('We are closed') + 1);
    const call = await endedCall(phoneNumberId);
    expect(call).toMatchObject({
      endedReason: 'assistant-request-returned-error',
      endedMessage: 'We are closed',
    });
    expect(Date.parse(call.endedAt as string)).toBeGreaterThanOrEqual(
      Date.parse(call.startedAt as string),
    );
    expect(h.sip.calls.liveCalls).toBe(0);
  });

  it(
    "speaks all of a long error, cut to 1000 characters, with the org's own OpenAI credential",
    { timeout: 40_000 },
    async () => {
      const text = 'We are closed for the holidays, please call again on Monday. '.repeat(20);
      const cut = text.trim().slice(0, 1000);
      const { number, phoneNumberId } = await numberWith(
        serverAnswering({ body: { error: text } }),
      );
      const [status, credential] = await h.post('/credential', {
        provider: 'openai',
        apiKey: 'sk-org',
        baseUrl: orgTts.url,
      });
      expect(status).toBe(201);
      const serverRequests = tts.requests.length;
      try {
        const packets = await callWithMedia(number, 'inbound-rtp-peer-wait-bye.xml');
        expect(tts.requests.length).toBe(serverRequests);
        expect(orgTts.requests).toHaveLength(1);
        expect(orgTts.requests[0]!.headers.authorization).toBe('Bearer sk-org');
        expect(orgTts.requests[0]!.body.input).toBe(cut);
        const frames = speechFrames(cut);
        expect(frames).toBeGreaterThan(60);
        const loud = packets.filter(isLoud).length;
        expect(loud).toBeGreaterThanOrEqual(frames - 2);
        expect(loud).toBeLessThanOrEqual(frames + 1);
      } finally {
        await h.store.resources.credentials.delete(h.orgId, credential.id as string);
      }
      expect(await endedCall(phoneNumberId)).toMatchObject({
        endedReason: 'assistant-request-returned-error',
        endedMessage: cut,
      });
    },
  );

  it(
    'declines with 603 and a Reason when the voice fails, and for a non-text error',
    { timeout: 40_000 },
    async () => {
      tts.enqueue({ status: 500 });
      const failing = await numberWith(serverAnswering({ body: { error: 'Closed' } }));
      const declined = await inviteOnce({ port: h.sip.port, number: failing.number });
      expect(declined.final?.status).toBe(603);
      expect(declined.final?.headers.get('reason')).toBe('Q.850;cause=21;text="Closed"');
      expect(declined.responses.some((response) => response.status === 200)).toBe(false);
      expect(await endedCall(failing.phoneNumberId)).toMatchObject({
        endedReason: 'assistant-request-returned-error',
        endedMessage: 'Closed',
      });
      const requestsBefore = tts.requests.length;
      const unspeakable = await numberWith(serverAnswering({ body: { error: { code: 7 } } }));
      const refused = await inviteOnce({ port: h.sip.port, number: unspeakable.number });
      expect(refused.final?.status).toBe(603);
      expect(await endedCall(unspeakable.phoneNumberId)).toMatchObject({
        endedReason: 'assistant-request-returned-unspeakable-error',
      });
      expect(tts.requests.length).toBe(requestsBefore);
    },
  );

  it(
    'answers a CANCEL during the synthesis 487, never 200, and drops the speech request',
    { timeout: 40_000 },
    async () => {
      // The speech takes 4 s to start; SIPp cancels 1 s after the 180.
      tts.enqueue({ firstByteDelayMs: 4000 });
      const requestsBefore = tts.requests.length;
      const { number, phoneNumberId } = await numberWith(
        serverAnswering({ body: { error: 'We are closed' } }),
      );
      const result = await runSipp(
        sippArgs(h, 'inbound-cancel-late.xml', ['-s', number, '-mp', mediaPort()]),
        tmpdir(),
      );
      expect(result.code, result.output).toBe(0);
      const request = tts.requests[requestsBefore];
      expect(request?.body.input).toBe('We are closed');
      await request!.closed;
      expect(request!.aborted).toBe(true);
      expect(await endedCall(phoneNumberId)).toMatchObject({
        endedReason: 'assistant-request-returned-error',
        endedMessage: 'We are closed',
      });
      await waitFor(() => h.sip.calls.liveCalls === 0, 5000, 'no live SIP call');
      expect(h.sip.agent.dialogs.dialogCount).toBe(0);
    },
  );

  it('stops speaking when the caller hangs up first', { timeout: 40_000 }, async () => {
    const text = 'We are closed for the holidays, please call again on Monday. '.repeat(16);
    const { number, phoneNumberId } = await numberWith(serverAnswering({ body: { error: text } }));
    // SIPp sends BYE 0.5 s after the ACK, long before the speech (1.7 s) is over; the packets
    // are counted once the call is stored ended and its RTP closed.
    const packets = await callWithMedia(number, 'inbound-rtp-peer-short.xml', async () => {
      await endedCall(phoneNumberId);
      await waitFor(() => h.sip.calls.liveCalls === 0, 5000, 'no live SIP call');
    });
    expect(await endedCall(phoneNumberId)).toMatchObject({
      endedReason: 'assistant-request-returned-error',
    });
    const frames = speechFrames(text.trim());
    expect(packets.filter(isLoud).length).toBeGreaterThan(0);
    // Had the speech gone on, every frame of it would have been sent before the RTP closed.
    expect(packets.length).toBeLessThan(frames);
  });
});
