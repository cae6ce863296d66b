import { randomInt } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { decodeG711, encodeG711, type G711Law } from '../../src/media/codecs/g711.js';
import {
  RTP_HEADER_BYTES,
  RtpPacketView,
  parseRtpPacket,
  timestampAdd,
  writeRtpHeader,
} from '../../src/transports/rtp/rtp-packet.js';
import {
  PCMU,
  createOffer,
  readAnswer,
  type LocalAudio,
} from '../../src/transports/sip/sdp-offer-answer.js';
import { parseSdp, serializeSdp } from '../../src/transports/sip/sdp.js';
import {
  HarnessError,
  type CallerTransport,
  type ConnectedCall,
  type TransportFactory,
  type TransportHandlers,
} from './caller-transport.js';
import { RtpArrivalStats } from './rtp-arrival-stats.js';
import { SipUac } from './sip-uac.js';
import { stageRecord } from './stage-record.js';

/**
 * The SIP/RTP adapter: an INVITE offering PCMU (G.711 μ-law, 8 kHz, 20 ms packets) to Parla's SIP
 * port as a trunk would (sip-uac.ts), then RTP both ways on a UDP socket of its own: each 20 ms
 * frame the harness paces out is μ-law encoded into one packet, and the packets Parla sends are
 * decoded and passed up as they arrive (no jitter buffer: lateness is what is measured), and
 * their arrival jitter is kept (`rtpArrival`). Closing sends a BYE. The call's audio rate is always 8000 Hz.
 *
 * When `api` is given, turnStages() finds the stored call (by the phone number and the caller
 * number this call sent) and reads its per-turn latency breakdown, as the websocket adapter does.
 */
export interface SipTransportOptions {
  /** Parla's SIP address (an IPv4 literal) and port (UDP). */
  sipHost: string;
  sipPort: number;
  /** The `byo-phone-number` to dial, routed to the assistant under test. */
  number: string;
  /** The caller's number (unique per call, so the stored call can be found). */
  fromNumber: string;
  /** Control API of the same Parla, to fetch the per-stage timings after the call. */
  api?: { baseUrl: string; apiKey: string; phoneNumberId: string; stagesWaitMs?: number };
}

export const SIP_SAMPLE_RATE_HZ = 8000;
const MAX_RESPONSE_BYTES = 4_000_000;

export class SipCallerTransport implements CallerTransport {
  readonly #o: SipTransportOptions;
  #uac: SipUac | null = null;
  #rtp: Socket | null = null;
  #remote: { address: string; port: number } | null = null;
  #payloadType = 0;
  #law: G711Law = 'mulaw';
  readonly #ssrc = randomInt(1, 2 ** 31);
  #sequence = randomInt(0, 0x10000);
  #timestamp = randomInt(0, 2 ** 31);
  #marker = true;
  readonly #view = new RtpPacketView();
  #decoded = new Int16Array(160);
  readonly #views = new Map<number, Int16Array>();
  #closed = false;
  /** Packets from Parla that were not audio of the negotiated payload type (or not RTP). */
  ignoredPackets = 0;
  /** RFC 3550 interarrival jitter and arrival gaps of Parla's audio packets, as received. */
  readonly rtpArrival = new RtpArrivalStats(SIP_SAMPLE_RATE_HZ);

  constructor(options: SipTransportOptions) {
    if (!Number.isInteger(options.sipPort) || options.sipPort < 1 || options.sipPort > 65_535) {
      throw new HarnessError('ERR_BENCH_USAGE', 'sipPort must be a port number');
    }
    this.#o = options;
  }

  async connect(handlers: TransportHandlers): Promise<ConnectedCall> {
    const rtp = createSocket('udp4');
    this.#rtp = rtp;
    await new Promise<void>((resolve, reject) => {
      rtp.once('error', reject);
      rtp.bind(0, '127.0.0.1', () => {
        rtp.off('error', reject);
        resolve();
      });
    });
    rtp.on('error', () => undefined);
    rtp.on('message', (data, source) => this.#receive(data, source, handlers));
    const local: LocalAudio = {
      address: '127.0.0.1',
      port: rtp.address().port,
      codecs: [PCMU],
      telephoneEvent: false,
      ptimeMs: 20,
      sessionId: String(randomInt(1, 2 ** 47)),
      sessionVersion: 1,
    };
    const offer = createOffer(local);
    this.#uac = await SipUac.open({
      serverHost: this.#o.sipHost,
      serverPort: this.#o.sipPort,
      number: this.#o.number,
      fromUser: this.#o.fromNumber,
      onRemoteBye: () => {
        if (!this.#closed) {
          handlers.onClose('the far side sent BYE');
        }
      },
    });
    const answerText = await this.#uac.invite(serializeSdp(offer));
    const answer = parseSdp(answerText);
    if (!answer.ok) {
      throw new HarnessError('ERR_BENCH_PROTOCOL', `the 200 OK's SDP does not parse`);
    }
    const negotiated = readAnswer(offer, answer.session, local);
    if (!negotiated.ok) {
      throw new HarnessError('ERR_BENCH_PROTOCOL', `SDP answer: ${negotiated.reason}`);
    }
    const { remoteAddress, remotePort, payloadType, codec } = negotiated.negotiated;
    this.#remote = { address: remoteAddress, port: remotePort };
    this.#payloadType = payloadType;
    this.#law = codec.encoding.toUpperCase() === 'PCMA' ? 'alaw' : 'mulaw';
    return { callId: `sip:${this.#uac.callId}`, sampleRateHz: SIP_SAMPLE_RATE_HZ };
  }

  /** One RTP packet per frame: the timestamp advances by the frame's samples. */
  sendAudio(samples: Int16Array): void {
    const rtp = this.#rtp;
    const remote = this.#remote;
    if (rtp === null || remote === null || this.#closed) {
      return;
    }
    // A fresh buffer per packet: dgram keeps it until the datagram is sent.
    const packet = Buffer.allocUnsafe(RTP_HEADER_BYTES + samples.length);
    writeRtpHeader(packet, {
      marker: this.#marker,
      payloadType: this.#payloadType,
      sequenceNumber: this.#sequence,
      timestamp: this.#timestamp,
      ssrc: this.#ssrc,
    });
    encodeG711(this.#law, samples, packet, 0, samples.length, RTP_HEADER_BYTES);
    this.#marker = false;
    this.#sequence = (this.#sequence + 1) & 0xffff;
    this.#timestamp = timestampAdd(this.#timestamp, samples.length);
    rtp.send(packet, remote.port, remote.address);
  }

  /** SIP has no channel for the harness's JSON control messages. */
  sendMessage(): void {}

  async close(): Promise<void> {
    if (this.#closed) {
      return;
    }
    this.#closed = true;
    await this.#uac?.close();
    const rtp = this.#rtp;
    if (rtp !== null) {
      await new Promise<void>((resolve) => rtp.close(() => resolve()));
    }
  }

  async turnStages(): Promise<Record<string, number>[]> {
    const api = this.#o.api;
    if (api === undefined) {
      return [];
    }
    const base = api.baseUrl.replace(/\/+$/, '');
    const headers = { authorization: `Bearer ${api.apiKey}` };
    const deadline = Date.now() + (api.stagesWaitMs ?? 15_000);
    for (;;) {
      const url = `${base}/call?phoneNumberId=${encodeURIComponent(api.phoneNumberId)}&limit=1000`;
      const response = await fetch(url, { headers, signal: AbortSignal.timeout(5000) });
      const text = await response.text();
      const list: unknown =
        response.ok && text.length <= MAX_RESPONSE_BYTES ? JSON.parse(text) : null;
      const call = Array.isArray(list)
        ? (list as unknown[]).find(
            (c) => isObject(c) && isObject(c.customer) && c.customer.number === this.#o.fromNumber,
          )
        : undefined;
      const ended = isObject(call) && call.status === 'ended' && isObject(call.artifact);
      if (ended || Date.now() > deadline) {
        const artifact = isObject(call) ? call.artifact : undefined;
        const metrics = isObject(artifact) ? artifact.performanceMetrics : undefined;
        const turns = isObject(metrics) ? metrics.turnLatencies : undefined;
        return Array.isArray(turns)
          ? turns
              .slice(0, 1000)
              .map((entry) => stageRecord(entry))
              .filter((stages): stages is Record<string, number> => stages !== null)
          : [];
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  #receive(data: Buffer, source: { address: string }, handlers: TransportHandlers): void {
    if (this.#closed || this.#remote === null || source.address !== this.#remote.address) {
      return;
    }
    const view = this.#view;
    if (
      parseRtpPacket(data, view) !== null ||
      view.payloadType !== this.#payloadType ||
      view.payloadLength === 0
    ) {
      this.ignoredPackets++;
      return;
    }
    this.rtpArrival.record(performance.now(), view.timestamp, view.ssrc);
    const count = view.payloadLength;
    if (this.#decoded.length < count) {
      this.#decoded = new Int16Array(count);
      this.#views.clear();
    }
    const length = count;
    decodeG711(this.#law, data, this.#decoded, view.payloadOffset, length, 0);
    // One view per packet size over the same buffer: steady 20 ms packets allocate nothing.
    let samples = this.#views.get(length);
    if (samples === undefined) {
      samples = this.#decoded.subarray(0, length);
      this.#views.set(length, samples);
    }
    handlers.onAudio(samples);
  }
}

/**
 * One SIP/RTP caller per call for `--transport sip`: `target` is `IPv4:port`; each call gets a
 * caller number of its own (unique to this run and call) so its stored call can be found.
 */
export function sipTransportFactory(options: {
  target: string;
  number: string;
  api?: SipTransportOptions['api'];
}): TransportFactory {
  const match = /^(\d{1,3}(?:\.\d{1,3}){3}):(\d{1,5})$/.exec(options.target);
  if (match === null || !/^\+?[0-9]{1,32}$/.test(options.number)) {
    throw new HarnessError(
      'ERR_BENCH_USAGE',
      '--transport sip needs --sip-target <IPv4:port> and --sip-number <digits>, or --self',
    );
  }
  const runTag = String(Date.now() % 100_000).padStart(5, '0');
  return (index) =>
    new SipCallerTransport({
      sipHost: match[1]!,
      sipPort: Number(match[2]),
      number: options.number,
      fromNumber: `+1999${runTag}${String(index).padStart(5, '0')}`,
      ...(options.api === undefined ? {} : { api: options.api }),
    });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
