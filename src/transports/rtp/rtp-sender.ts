import { randomBytes } from 'node:crypto';
import { encodeG711, type G711Law } from '../../media/codecs/g711.js';
import { RTP_HEADER_BYTES, writeRtpHeader, type RtpHeaderFields } from './rtp-packet.js';
import { DtmfSender, type DtmfStep } from './dtmf-sender.js';
import { TELEPHONE_EVENT_PAYLOAD_BYTES } from './telephone-event.js';

/** Packets kept in flight: a datagram may still be queued in the socket when we write the next. */
const SEND_RING = 8;

/**
 * The sending half of a G.711 RTP stream: random initial SSRC, sequence number and timestamp
 * (RFC 3550 §5.1), one packet per 20 ms tick into a small ring of preallocated buffers, the
 * marker on the first packet of each talkspurt, and RFC 4733 digits in place of the audio of
 * the ticks they span (the voice is silenced until the digits are done). The timestamp
 * advances by one frame every tick, sent or not.
 */
export class RtpSender {
  readonly ssrc: number;
  sequenceNumber: number;
  timestamp: number;
  law: G711Law;
  payloadType: number;
  private markNext = true;
  private readonly buffers: Uint8Array[];
  private index = 0;
  private readonly dtmf: DtmfSender;
  private readonly silence: Int16Array;
  private readonly header: RtpHeaderFields = {
    marker: false,
    payloadType: 0,
    sequenceNumber: 0,
    timestamp: 0,
    ssrc: 0,
  };

  constructor(
    readonly frameSamples: number,
    clockRateHz: number,
    law: G711Law,
    payloadType: number,
    private readonly telephoneEventPayloadType: number | undefined,
  ) {
    const seed = randomBytes(10);
    this.ssrc = seed.readUInt32BE(0);
    this.sequenceNumber = seed.readUInt16BE(4);
    this.timestamp = seed.readUInt32BE(6);
    this.law = law;
    this.payloadType = payloadType;
    this.dtmf = new DtmfSender(frameSamples, clockRateHz);
    this.silence = new Int16Array(frameSamples);
    this.buffers = Array.from(
      { length: SEND_RING },
      () => new Uint8Array(RTP_HEADER_BYTES + frameSamples),
    );
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
      encodeG711(this.law, audio, buffer, 0, this.frameSamples, RTP_HEADER_BYTES);
      header.payloadType = this.payloadType;
      header.marker = this.markNext;
      header.timestamp = this.timestamp;
      this.markNext = false;
      out.length = RTP_HEADER_BYTES + this.frameSamples;
      kind = 'audio';
    }
    header.sequenceNumber = this.sequenceNumber;
    header.ssrc = this.ssrc;
    this.timestamp = (this.timestamp + this.frameSamples) >>> 0;
    out.buffer = buffer;
    if (send) {
      this.sequenceNumber = (this.sequenceNumber + 1) & 0xffff;
      writeRtpHeader(buffer, header);
    }
    return kind;
  }
}
