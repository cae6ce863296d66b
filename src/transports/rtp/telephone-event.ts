/**
 * RFC 4733 telephone-events (DTMF): the 4-byte payload, a receiver that turns a stream of
 * event packets into one report per key press, and a sender that produces the packets for a
 * digit (start with the marker, updates every 20 ms, three end packets).
 */

export const TELEPHONE_EVENT_PAYLOAD_BYTES = 4;
const DIGITS = '0123456789*#ABCD';
/** Events 0–15 are DTMF (RFC 4733 §3.2); others (flash, tones) are ignored. */
const MAX_DTMF_EVENT = 15;

export function dtmfDigitOf(event: number): string | undefined {
  return event <= MAX_DTMF_EVENT ? DIGITS[event] : undefined;
}

export function dtmfEventOf(digit: string): number | undefined {
  const index = DIGITS.indexOf(digit.toUpperCase());
  return index < 0 || digit.length !== 1 ? undefined : index;
}

export interface DtmfDigitEvent {
  digit: string;
  /** Duration in ms, from the event's duration field at the clock rate. */
  durationMs: number;
  /** The RTP timestamp the event started at (identifies it). */
  rtpTimestamp: number;
}

/**
 * Turns incoming telephone-event packets into digits, each reported exactly once: when its
 * first end packet arrives (the two redundant end copies, and copies with the same sequence
 * number, are ignored), or, when every end packet was lost, as soon as a packet of a later
 * event arrives or `flush` is called (by the session on an inactivity check).
 */
export class TelephoneEventReceiver {
  private current = -1;
  private currentEvent = 0;
  private currentDuration = 0;
  private currentEnded = false;
  private hasCurrent = false;
  /** Timestamps of the last events reported: a late copy of their packets is not a new event. */
  private readonly reported = new Float64Array(4).fill(-1);
  private reportedIndex = 0;

  constructor(
    private readonly clockRateHz: number,
    private readonly onDigit: (event: DtmfDigitEvent) => void,
  ) {}

  /** Offers one payload; returns false when it is not a valid telephone-event payload. */
  receive(rtpTimestamp: number, payload: Uint8Array, offset: number, length: number): boolean {
    if (length < TELEPHONE_EVENT_PAYLOAD_BYTES) {
      return false;
    }
    const event = payload[offset]!;
    const end = (payload[offset + 1]! & 0x80) !== 0;
    const duration = (payload[offset + 2]! << 8) | payload[offset + 3]!;
    if (!this.hasCurrent || rtpTimestamp !== this.current) {
      if (this.wasReported(rtpTimestamp)) {
        return true; // a late or reordered copy of an event already reported
      }
      if (this.hasCurrent && !this.currentEnded) {
        this.report();
      }
      this.hasCurrent = true;
      this.current = rtpTimestamp;
      this.currentEvent = event;
      this.currentDuration = duration;
      this.currentEnded = false;
    } else if (duration > this.currentDuration) {
      this.currentDuration = duration;
    }
    if (end && !this.currentEnded) {
      this.currentEnded = true;
      this.report();
    }
    return true;
  }

  /** Reports an event whose end packets never came. */
  flush(): void {
    if (this.hasCurrent && !this.currentEnded) {
      this.currentEnded = true;
      this.report();
    }
  }

  private wasReported(rtpTimestamp: number): boolean {
    for (let i = 0; i < this.reported.length; i++) {
      if (this.reported[i] === rtpTimestamp) {
        return true;
      }
    }
    return false;
  }

  private report(): void {
    this.reported[this.reportedIndex] = this.current;
    this.reportedIndex = (this.reportedIndex + 1) % this.reported.length;
    const digit = dtmfDigitOf(this.currentEvent);
    if (digit !== undefined) {
      this.onDigit({
        digit,
        durationMs: Math.round((this.currentDuration * 1000) / this.clockRateHz),
        rtpTimestamp: this.current,
      });
    }
  }
}

/** Default volume field: −10 dBm0, the level RFC 4733 §2.5.2.2 examples and phones use. */
const DEFAULT_VOLUME = 10;
const END_PACKETS = 3;

/**
 * Produces the packets for queued digits, one per 20 ms frame tick. The session asks `next`
 * at each tick while `active`; the packet payload is written into `out` and the call returns
 * whether this packet carries the marker bit. All packets of a digit share one RTP timestamp
 * (the tick the digit started at); its duration grows by one frame per packet.
 */
export class TelephoneEventSender {
  private readonly queue: { event: number; frames: number }[] = [];
  private event = 0;
  private totalFrames = 0;
  private sentFrames = 0;
  private endsSent = 0;
  private busy = false;
  /** RTP timestamp of the digit being sent. */
  startTimestamp = 0;

  constructor(
    private readonly frameSamples: number,
    private readonly clockRateHz = 8000,
    private readonly maxQueued = 64,
  ) {}

  get active(): boolean {
    return this.busy || this.queue.length > 0;
  }

  /** Queues a digit of `durationMs` (40–5000 ms). Returns false for a non-DTMF character. */
  enqueue(digit: string, durationMs: number): boolean {
    const event = dtmfEventOf(digit);
    if (event === undefined || this.queue.length >= this.maxQueued) {
      return false;
    }
    const frameMs = (this.frameSamples * 1000) / this.clockRateHz;
    const clamped = Math.min(5000, Math.max(40, durationMs));
    this.queue.push({ event, frames: Math.max(2, Math.round(clamped / frameMs)) });
    return true;
  }

  /**
   * Writes the next packet's payload. `timestamp` is the audio timestamp of this tick; a new
   * digit starts there. Returns 'start' (marker), 'continue', or 'idle' when nothing is due.
   */
  next(timestamp: number, out: Uint8Array, offset: number): 'start' | 'continue' | 'idle' {
    let start = false;
    if (!this.busy) {
      const item = this.queue.shift();
      if (item === undefined) {
        return 'idle';
      }
      this.busy = true;
      this.event = item.event;
      this.totalFrames = item.frames;
      this.sentFrames = 0;
      this.endsSent = 0;
      this.startTimestamp = timestamp;
      start = true;
    }
    let end = false;
    if (this.sentFrames < this.totalFrames) {
      this.sentFrames++;
    } else {
      end = true;
      this.endsSent++;
    }
    // The duration field counts samples since the start, capped at 16 bits.
    const duration = Math.min(0xffff, this.sentFrames * this.frameSamples);
    out[offset] = this.event;
    out[offset + 1] = (end ? 0x80 : 0) | DEFAULT_VOLUME;
    out[offset + 2] = duration >> 8;
    out[offset + 3] = duration & 0xff;
    if (end && this.endsSent >= END_PACKETS) {
      this.busy = false;
    }
    return start ? 'start' : 'continue';
  }
}
