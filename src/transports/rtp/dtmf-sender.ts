import { TelephoneEventSender, dtmfEventOf } from './telephone-event.js';

/** How long each key is held. Q.24 asks for at least 40 ms; IVRs are happiest near 100. */
export const DTMF_TONE_MS = 100;
/** Silence between two keys, counted from the digit's first end packet. */
export const DTMF_GAP_MS = 100;
/** What `w` and `W` wait (the dial-string convention). */
export const DTMF_SHORT_WAIT_MS = 500;
export const DTMF_LONG_WAIT_MS = 1000;
/** Keys and waits in one string (one `dtmf` tool call). */
export const MAX_DTMF_KEYS = 64;

/** One step of a dial string: a key to press or a wait. */
export type DtmfStep =
  | { readonly kind: 'key'; readonly digit: string }
  | { readonly kind: 'wait'; readonly durationMs: number };

export type DtmfParse =
  | { readonly ok: true; readonly steps: readonly DtmfStep[] }
  | { readonly ok: false; readonly code: 'invalid-dtmf'; readonly message: string };

/**
 * Parses a dial string: 0-9, *, #, A-D (any case) press a key, `w` waits 500 ms and `W` 1 s;
 * spaces and dashes are ignored (people write `1-800 …`). At most MAX_DTMF_KEYS steps.
 */
export function parseDtmfDigits(digits: string): DtmfParse {
  const steps: DtmfStep[] = [];
  for (const char of digits) {
    if (char === ' ' || char === '-') {
      continue;
    }
    if (char === 'w' || char === 'W') {
      steps.push({
        kind: 'wait',
        durationMs: char === 'w' ? DTMF_SHORT_WAIT_MS : DTMF_LONG_WAIT_MS,
      });
    } else if (dtmfEventOf(char) !== undefined) {
      steps.push({ kind: 'key', digit: char.toUpperCase() });
    } else {
      return {
        ok: false,
        code: 'invalid-dtmf',
        message: `"${char.slice(0, 4)}" is not a DTMF key: use 0-9, *, #, A-D, w (0.5 s) or W (1 s)`,
      };
    }
    if (steps.length > MAX_DTMF_KEYS) {
      return { ok: false, code: 'invalid-dtmf', message: `at most ${MAX_DTMF_KEYS} keys at once` };
    }
  }
  if (!steps.some((step) => step.kind === 'key')) {
    return { ok: false, code: 'invalid-dtmf', message: 'no DTMF key to send' };
  }
  return { ok: true, steps };
}

/** Single keys queued beyond this are refused (a string is bounded by MAX_DTMF_KEYS). */
const MAX_QUEUED_ITEMS = 512;

type Item =
  | { readonly kind: 'key'; readonly digit: string; readonly durationMs: number }
  | { readonly kind: 'silence'; readonly frames: number }
  | { readonly kind: 'done'; readonly resolve: (sent: boolean) => void };

/** What the tick carries: an event packet ('start' with the marker), silence, or the voice. */
export type DtmfTick = 'start' | 'continue' | 'silence' | 'idle';

/**
 * Sends dial strings as RFC 4733 events, clocked by the RTP sender's 20 ms ticks: each key is
 * an event of DTMF_TONE_MS (the updates and three end packets of TelephoneEventSender), then
 * DTMF_GAP_MS of silence; waits are silence. While a string is being sent the voice is paused
 * (its ticks go out as silence or events), so the far end's detector hears clean tones.
 */
export class DtmfSender {
  private readonly tone: TelephoneEventSender;
  private readonly frameMs: number;
  private items: Item[] = [];
  private silenceFrames = 0;

  constructor(frameSamples: number, clockRateHz: number) {
    this.tone = new TelephoneEventSender(frameSamples, clockRateHz);
    this.frameMs = (frameSamples * 1000) / clockRateHz;
  }

  /** A string (or a single queued key) is being sent: the voice must wait. */
  get active(): boolean {
    return this.tone.active || this.silenceFrames > 0 || this.items.length > 0;
  }

  /** RTP timestamp of the event being sent (all its packets share it). */
  get startTimestamp(): number {
    return this.tone.startTimestamp;
  }

  /** Queues one key of `durationMs` (40–5000 ms); false for a non-DTMF character. */
  enqueueKey(digit: string, durationMs: number): boolean {
    if (dtmfEventOf(digit) === undefined || this.items.length >= MAX_QUEUED_ITEMS) {
      return false;
    }
    this.items.push({ kind: 'key', digit, durationMs });
    this.items.push({ kind: 'silence', frames: this.gapFrames() });
    return true;
  }

  /**
   * Queues parsed steps; `onDone(true)` runs on the tick after the last of them went out,
   * `onDone(false)` if cancel() drops them first.
   */
  enqueue(steps: readonly DtmfStep[], onDone: (sent: boolean) => void): void {
    for (const step of steps) {
      if (step.kind === 'key') {
        this.items.push({ kind: 'key', digit: step.digit, durationMs: DTMF_TONE_MS });
        this.items.push({ kind: 'silence', frames: this.gapFrames() });
      } else {
        this.items.push({ kind: 'silence', frames: Math.round(step.durationMs / this.frameMs) });
      }
    }
    this.items.push({ kind: 'done', resolve: onDone });
  }

  /**
   * This tick's part: writes an event payload at `out[offset]` ('start' or 'continue'), or
   * says the tick is silence or free for the voice ('idle'). `timestamp` is the tick's RTP
   * timestamp; a new key starts there.
   */
  next(timestamp: number, out: Uint8Array, offset: number): DtmfTick {
    for (;;) {
      if (this.tone.active) {
        const sent = this.tone.next(timestamp, out, offset);
        if (sent !== 'idle') {
          return sent;
        }
      }
      if (this.silenceFrames > 0) {
        this.silenceFrames--;
        return 'silence';
      }
      const item = this.items.shift();
      if (item === undefined) {
        return 'idle';
      }
      if (item.kind === 'key') {
        this.tone.enqueue(item.digit, item.durationMs);
      } else if (item.kind === 'silence') {
        this.silenceFrames = item.frames;
      } else {
        item.resolve(true);
      }
    }
  }

  /** Drops what is queued (the session closed); pending strings report false. */
  cancel(): void {
    const items = this.items;
    this.items = [];
    this.silenceFrames = 0;
    while (this.tone.active) {
      this.tone.next(0, new Uint8Array(4), 0);
    }
    for (const item of items) {
      if (item.kind === 'done') {
        item.resolve(false);
      }
    }
  }

  /** The end packets after a tone already last two frames of the gap. */
  private gapFrames(): number {
    return Math.max(0, Math.round(DTMF_GAP_MS / this.frameMs) - 2);
  }
}
