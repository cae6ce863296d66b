/**
 * An inbound SIP call end to end on the real voice pipeline against local fakes of the vendors:
 * SIPp is the trunk (signalling), the test's RTP socket is the caller's phone. The caller hears
 * the first message over RTP, speaks the G.711 speech of the pcap SIPp ships, hears the reply,
 * and SIPp hangs up; the call is stored as an inbound phone call ended by the customer.
 */
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeALaw } from '../../src/media/codecs/g711.js';
import { rtpPeer, sippArgs, useSipHarness } from '../calls/sip-call-harness.js';
import { waitFor } from '../calls/websocket-call-harness.js';
import { dgResults, FakeDeepgramServer } from '../support/fake-deepgram-server.js';
import { FakeOpenAiServer } from '../support/fake-openai-server.js';
import { FakeSpeechServer } from '../support/fake-voice-servers.js';
import { hasSipp, runSipp, SIPP_PCAP_DIR } from '../support/sipp.js';

const model = new FakeOpenAiServer();
const deepgram = new FakeDeepgramServer();
const elevenLabs = new FakeSpeechServer('11labs', 'el-key');
beforeAll(async () => {
  await Promise.all([model.start(), deepgram.start(), elevenLabs.start()]);
});
afterAll(async () => {
  await Promise.all([model.close(), deepgram.close(), elevenLabs.stop()]);
});

const h = useSipHarness({
  pipeline: true,
  providers: () => ({
    openaiBaseUrl: model.url,
    openaiApiKey: 'sk-server',
    elevenLabsBaseUrl: elevenLabs.url,
    elevenLabsApiKey: 'el-key',
  }),
});

/** The RTP packets of a pcap (Ethernet, IPv4, UDP), in order. */
function pcapRtpPackets(path: string): Buffer[] {
  const data = readFileSync(path);
  const packets: Buffer[] = [];
  for (let offset = 24; offset + 16 <= data.length;) {
    const length = data.readUInt32LE(offset + 8);
    const frame = data.subarray(offset + 16, offset + 16 + length);
    offset += 16 + length;
    const ipHeaderBytes = (frame[14]! & 0x0f) * 4;
    if (frame.readUInt16BE(12) !== 0x0800 || frame[23] !== 17) {
      continue;
    }
    packets.push(Buffer.from(frame.subarray(14 + ipHeaderBytes + 8)));
  }
  return packets;
}

/** Mean absolute sample value of an A-law RTP packet. */
function loudness(packet: Buffer): number {
  if (packet.length <= 12 || (packet[1]! & 0x7f) !== 8) {
    return 0;
  }
  const samples = new Int16Array(packet.length - 12);
  decodeALaw(packet.subarray(12), samples);
  let sum = 0;
  for (const sample of samples) {
    sum += Math.abs(sample);
  }
  return sum / samples.length;
}

describe.skipIf(!hasSipp)('an inbound SIP call on the voice pipeline', () => {
  it(
    'greets, hears the pcap speech, answers over RTP and ends on BYE',
    { timeout: 60_000 },
    async () => {
      const speech = pcapRtpPackets(`${SIPP_PCAP_DIR}/g711a.pcap`);
      expect(speech.length).toBeGreaterThan(200);
      deepgram.finalizeReply = [
        dgResults('Thanks for calling.', { isFinal: true, speechFinal: true, duration: 1.2 }),
      ];
      for (const credential of [
        { provider: 'openai', apiKey: 'sk-org' },
        { provider: 'deepgram', apiKey: deepgram.apiKey, apiUrl: deepgram.url },
      ]) {
        expect((await h.post('/credential', credential))[0]).toBe(201);
      }
      const number = '+15550003000';
      const { phoneNumberId } = await h.phoneNumber({
        number,
        assistant: {
          firstMessage: 'Hello, how can I help?',
          model: { provider: 'openai', model: 'gpt-4o-mini' },
          transcriber: { provider: 'deepgram', model: 'nova-2' },
          voice: { provider: '11labs', voiceId: 'voice-1' },
        },
      });
      const peer = await rtpPeer();
      try {
        const sipp = runSipp(
          sippArgs(h, 'inbound-rtp-peer-long.xml', [
            '-s',
            number,
            '-set',
            'rtpport',
            String(peer.port),
          ]),
          tmpdir(),
        );
        let parlaPort = 0;
        peer.socket.once('message', (_data, info) => (parlaPort = info.port));
        await waitFor(() => parlaPort !== 0, 10_000, 'RTP from Parla');
        const loud = (): number => peer.packets.filter((packet) => loudness(packet) > 200).length;
        // The first message (a short clip from the fake voice), while the caller sends silence.
        const silence = Buffer.from(speech[0]!);
        silence.fill(0xd5, 12);
        let sequence = 0;
        const send = (packet: Buffer): void => {
          const copy = Buffer.from(packet);
          copy.writeUInt16BE(sequence & 0xffff, 2);
          copy.writeUInt32BE((sequence * 160) >>> 0, 4);
          copy.writeUInt32BE(0x5150, 8);
          sequence++;
          peer.socket.send(copy, parlaPort, '127.0.0.1');
        };
        const pace = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 20));
        while (loud() === 0) {
          send(silence);
          await pace();
          expect(sequence).toBeLessThan(500);
        }
        const greeting = loud();
        for (const packet of speech.slice(0, 150)) {
          send(packet);
          await pace();
        }
        let done = false;
        void sipp.then(() => (done = true));
        while (!done) {
          send(silence);
          await pace();
        }
        const result = await sipp;
        expect(result.code, result.output).toBe(0);
        expect(deepgram.connections[0]!.audioBytes).toBeGreaterThan(8000);
        expect(JSON.stringify(model.requests.at(-1)?.body)).toContain('Thanks for calling.');
        // The reply came back as sound after the greeting.
        expect(loud()).toBeGreaterThan(greeting);
        let call: Record<string, unknown> | undefined;
        const deadline = Date.now() + 20_000;
        while (call?.status !== 'ended' && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          call = (await h.callsOf(phoneNumberId))[0];
        }
        expect(call).toMatchObject({
          type: 'inboundPhoneCall',
          phoneCallTransport: 'sip',
          status: 'ended',
          endedReason: 'customer-ended-call',
        });
      } finally {
        peer.socket.close();
      }
    },
  );
});
