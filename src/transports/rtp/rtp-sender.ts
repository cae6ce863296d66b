import { randomBytes } from 'node:crypto';
import type { RtpCodecProfile, RtpPayloadEncoder } from './rtp-codecs.js';
import { RTP_HEADER_BYTES, writeRtpHeader, type RtpHeaderFields } from './rtp-packet.js';
import { DtmfSender, type DtmfStep } from './dtmf-sender.js';
import { TELEPHONE_EVENT_PAYLOAD_BYTES } from './telephone-event.js';

/** Packets kept in flight: a datagram may still be queued in the socket when we write the next. */
const SEND_RING = 8;
/** Room for the largest payload of any codec (an Opus packet; see opus-frame-decoder.ts). */
const MAX_PAYLOAD_BYTES = 1276;

/**
 * The sending half of an RTP audio stream (any codec of rtp-codecs.ts): random initial SSRC, sequence number and timestamp
 * (RFC 3550 §5.1), one packet per 20 ms tick into a small ring of preallocated buffers, the
 * marker on the first packet of each talkspurt, and RFC 4733 digits in place of the audio of
 * the ticks they span (the voice is silenced until the digits are done). The timestamp
 * advances by one frame (in RTP clock units) every tick, sent or not. RFC 4733 events use the
 * codec's RTP clock: the SDP layer pairs telephone-event with the codec's rate.
 */
export class RtpSender {
  readonly ssrc: number;
  sequenceNumber: number;
  timestamp: number;
  payloadType: number;
  /** PCM samples of one 20 ms frame at the codec's rate. */
  frameSamples: number;
  private frameClockUnits: number;
  private clockRateHz: number;
  private encoder: RtpPayloadEncoder;
  private markNext = true;
  private readonly buffers: Uint8Array[];
  private index = 0;
  private dtmf: DtmfSender;
  private silence: Int16Array;
  private readonly header: RtpHeaderFields = {
    marker: false,
    payloadType: 0,
    sequenceNumber: 0,
    timestamp: 0,
    ssrc: 0,
  };

  constructor(
    profile: RtpCodecProfile,
    payloadType: number,
    private telephoneEventPayloadType: number | undefined,
  ) {
    const seed = randomBytes(10);
    this.ssrc = seed.readUInt32BE(0);
    this.sequenceNumber = seed.readUInt16BE(4);
    this.timestamp = seed.readUInt32BE(6);
    this.payloadType = payloadType;
    this.frameSamples = profile.frameSamples;
    this.frameClockUnits = profile.frameClockUnits;
    this.clockRateHz = profile.clockRateHz;
    this.encoder = profile.newEncoder();
    this.dtmf = new DtmfSender(profile.frameClockUnits, profile.clockRateHz);
    this.silence = new Int16Array(profile.frameSamples);
    this.buffers = Array.from(
      { length: SEND_RING },
      () => new Uint8Array(RTP_HEADER_BYTES + MAX_PAYLOAD_BYTES),
    );
  }

  /**
   * Switches codec (a re-INVITE): the stream (SSRC, sequence, timestamp) goes on. A change of
   * RTP clock drops digits still queued, as their timing was in the old clock.
   */
  setCodec(
    profile: RtpCodecProfile,
    payloadType: number,
    telephoneEventPayloadType?: number,
  ): void {
    this.payloadType = payloadType;
    if (telephoneEventPayloadType !== undefined) {
      this.telephoneEventPayloadType = telephoneEventPayloadType;
    }
    this.encoder = profile.newEncoder();
    this.frameSamples = profile.frameSamples;
    if (this.silence.length !== profile.frameSamples) {
      this.silence = new Int16Array(profile.frameSamples);
    }
    if (profile.clockRateHz !== this.clockRateHz) {
      this.dtmf.cancel();
      this.dtmf = new DtmfSender(profile.frameClockUnits, profile.clockRateHz);
    }
    this.frameClockUnits = profile.frameClockUnits;
    this.clockRateHz = profile.clockRateHz;
    this.markNext = true;
  }

  markTalkspurt(): void {
    this.markNext = true;
  }

  /** Queues a digit; false when telephone-event was not negotiated or it is not a DTMF key. */
  enqueueDigit(digit: string, durationMs: number): boolean {
    return this.telephoneEventPayloadType !== undefined && this.dtmf.enqueueKey(digit, durationMs);
  }

  /** Whether telephone-event was negotiated (else DTMF has to go some other way). */
  get canSendDtmf(): boolean {
    return this.telephoneEventPayloadType !== undefined;
  }

  /**
   * Queues a parsed dial string; `onDone(true)` once its last step went out, `onDone(false)`
   * when telephone-event was not negotiated or cancelDtmf() dropped it.
   */
  enqueueDtmf(steps: readonly DtmfStep[], onDone: (sent: boolean) => void): void {
    if (this.telephoneEventPayloadType === undefined) {
      onDone(false);
      return;
    }
    this.dtmf.enqueue(steps, onDone);
  }

  /** A dial string (or a queued key) is going out: voice given to next() is not sent. */
  get sendingDtmf(): boolean {
    return this.dtmf.active;
  }

  cancelDtmf(): void {
    this.dtmf.cancel();
  }

  /**
   * Writes this tick's packet (audio, or the due DTMF packet) and returns its buffer and
   * length through `out`. With `send` false the tick passes without using a sequence number.
   * Returns 'audio', 'dtmf-start' or 'dtmf'.
   */
  next(
    samples: Int16Array,
    send: boolean,
    out: { buffer: Uint8Array; length: number },
  ): 'audio' | 'dtmf-start' | 'dtmf' {
    const buffer = this.buffers[this.index]!;
    this.index = (this.index + 1) % SEND_RING;
    const header = this.header;
    const eventPt = this.telephoneEventPayloadType;
    const dtmf =
      eventPt !== undefined && this.dtmf.active
        ? this.dtmf.next(this.timestamp, buffer, RTP_HEADER_BYTES)
        : 'idle';
    let kind: 'audio' | 'dtmf-start' | 'dtmf';
    if (dtmf === 'start' || dtmf === 'continue') {
      header.payloadType = eventPt!;
      header.marker = dtmf === 'start';
      header.timestamp = this.dtmf.startTimestamp;
      out.length = RTP_HEADER_BYTES + TELEPHONE_EVENT_PAYLOAD_BYTES;
      this.markNext = true; // audio after the digit starts a new talkspurt
      kind = dtmf === 'start' ? 'dtmf-start' : 'dtmf';
    } else {
      // Between keys and during waits the voice is held back: the tick carries silence.
      const audio = dtmf === 'silence' ? this.silence : samples;
      const payloadBytes = this.encoder.encode(audio, buffer, RTP_HEADER_BYTES);
      header.payloadType = this.payloadType;
      header.marker = this.markNext;
      header.timestamp = this.timestamp;
      this.markNext = false;
      out.length = RTP_HEADER_BYTES + payloadBytes;
      kind = 'audio';
    }
    header.sequenceNumber = this.sequenceNumber;
    header.ssrc = this.ssrc;
    this.timestamp = (this.timestamp + this.frameClockUnits) >>> 0;
    out.buffer = buffer;
    if (send) {
      this.sequenceNumber = (this.sequenceNumber + 1) & 0xffff;
      writeRtpHeader(buffer, header);
    }
    return kind;
  }
}
