import type {
  CallerTransport,
  ConnectedCall,
  TransportFactory,
  TransportHandlers,
} from './caller-transport.js';
import type { Clock, TimerHandle } from './clock.js';

/**
 * An in-process stand-in for a voice server, for testing the harness end to end and for a dry run
 * (`--fake`). It hears the caller with its own detector (any sample at or above
 * `loudAmplitude`), decides the caller's turn is over after `endOfTurnSilenceMs` of quiet, and
 * answers with a tone that starts exactly `latencyMs` after the caller's last loud sample, paced
 * in 20 ms frames on the clock (with optional arrival jitter). Caller speech during a reply that
 * lasts `bargeInAfterMs` stops the reply (and sends `clear`), as a barge-in would.
 */
export interface FakeServerOptions {
  clock: Clock;
  sampleRateHz?: number;
  frameMs?: number;
  /** Caller's last loud sample → first reply sample. Must be ≥ endOfTurnSilenceMs. */
  latencyMs: number;
  endOfTurnSilenceMs?: number;
  replyMs?: number;
  /** Speak first: a reply of replyMs this long after connecting. */
  firstMessageAfterMs?: number;
  /** Caller speech this long during a reply stops it (pauses under 300 ms do not reset the count). Default 200 ms. */
  bargeInAfterMs?: number;
  /** Each reply frame arrives up to this much late (seeded, in order). Default 0. */
  jitterMs?: number;
  /** Send `{type: 'metrics', latency}` at each reply (a made-up split of latencyMs). */
  sendStages?: boolean;
  loudAmplitude?: number;
}

const TONE_HZ = 330;
const BARGE_IN_RESET_MS = 300;

export function fakeTransportFactory(options: FakeServerOptions): TransportFactory {
  return (callIndex) => new FakeServerTransport(options, callIndex);
}

export class FakeServerTransport implements CallerTransport {
  readonly #o: Required<Omit<FakeServerOptions, 'firstMessageAfterMs'>> & {
    firstMessageAfterMs: number | undefined;
  };
  readonly #callIndex: number;
  readonly #frameSamples: number;
  readonly #reply: Int16Array;
  #handlers: TransportHandlers | null = null;
  #timer: TimerHandle | null = null;
  #lastLoudMs = Number.NEGATIVE_INFINITY;
  #callerTurnOpen = false;
  #loudDuringReplyMs = 0;
  #replying = false;
  #replyFrame = 0;
  #replyStartMs = 0;
  #lastDeliveryMs = 0;
  #seed: number;
  #closed = false;

  constructor(options: FakeServerOptions, callIndex: number) {
    this.#o = {
      sampleRateHz: 16_000,
      frameMs: 20,
      endOfTurnSilenceMs: 200,
      replyMs: 2000,
      bargeInAfterMs: 200,
      jitterMs: 0,
      sendStages: false,
      loudAmplitude: 500,
      ...options,
      firstMessageAfterMs: options.firstMessageAfterMs,
    };
    if (this.#o.latencyMs < this.#o.endOfTurnSilenceMs) {
      throw new RangeError('latencyMs must be at least endOfTurnSilenceMs');
    }
    this.#callIndex = callIndex;
    this.#seed = 1 + callIndex;
    const rate = this.#o.sampleRateHz;
    this.#frameSamples = Math.round((this.#o.frameMs * rate) / 1000);
    const frames = Math.ceil(this.#o.replyMs / this.#o.frameMs);
    this.#reply = new Int16Array(frames * this.#frameSamples);
    for (let i = 0; i < this.#reply.length; i++) {
      this.#reply[i] = Math.round(6000 * Math.sin((2 * Math.PI * TONE_HZ * i) / rate));
    }
  }

  connect(handlers: TransportHandlers): Promise<ConnectedCall> {
    this.#handlers = handlers;
    if (this.#o.firstMessageAfterMs !== undefined) {
      this.#startReplyAt(this.#o.clock.nowMs() + this.#o.firstMessageAfterMs);
    }
    return Promise.resolve({
      callId: `fake-${this.#callIndex}`,
      sampleRateHz: this.#o.sampleRateHz,
    });
  }

  sendAudio(samples: Int16Array): void {
    if (this.#closed) {
      return;
    }
    const o = this.#o;
    const nowMs = o.clock.nowMs();
    // The frame holds the audio captured during the last samples.length samples.
    const msPerSample = 1000 / o.sampleRateHz;
    const frameStartMs = nowMs - samples.length * msPerSample;
    let loud = false;
    for (let i = 0; i < samples.length; i++) {
      if (Math.abs(samples[i]!) >= o.loudAmplitude) {
        this.#lastLoudMs = frameStartMs + (i + 1) * msPerSample;
        loud = true;
      }
    }
    if (this.#replying) {
      // Speech time during the reply, forgotten after a pause (as a stopSpeakingPlan counts it).
      if (loud) {
        this.#loudDuringReplyMs += o.frameMs;
      } else if (nowMs - this.#lastLoudMs >= BARGE_IN_RESET_MS) {
        this.#loudDuringReplyMs = 0;
      }
      if (this.#loudDuringReplyMs >= o.bargeInAfterMs) {
        this.#stopReply();
        this.#handlers?.onMessage({ type: 'user-interrupted' });
        this.#handlers?.onMessage({ type: 'clear' });
        this.#callerTurnOpen = true;
      }
      return;
    }
    if (loud) {
      this.#callerTurnOpen = true;
    } else if (this.#callerTurnOpen && nowMs - this.#lastLoudMs >= o.endOfTurnSilenceMs) {
      this.#callerTurnOpen = false;
      this.#startReplyAt(this.#lastLoudMs + o.latencyMs);
    }
  }

  sendMessage(): void {}

  close(): Promise<void> {
    this.#closed = true;
    this.#cancelTimer();
    return Promise.resolve();
  }

  #startReplyAt(atMs: number): void {
    this.#cancelTimer();
    this.#replying = true;
    this.#loudDuringReplyMs = 0;
    this.#replyFrame = 0;
    this.#replyStartMs = atMs;
    this.#lastDeliveryMs = atMs;
    this.#scheduleFrame();
  }

  #scheduleFrame(): void {
    const o = this.#o;
    const nominalMs = this.#replyStartMs + this.#replyFrame * o.frameMs + this.#jitter();
    const atMs = Math.max(nominalMs, this.#lastDeliveryMs);
    this.#timer = o.clock.setTimer(() => this.#deliver(), atMs - o.clock.nowMs());
  }

  #deliver(): void {
    this.#timer = null;
    const o = this.#o;
    const handlers = this.#handlers;
    if (this.#closed || handlers === null) {
      return;
    }
    this.#lastDeliveryMs = o.clock.nowMs();
    if (this.#replyFrame === 0) {
      handlers.onMessage({ type: 'speech-update', role: 'assistant', status: 'started' });
      if (o.sendStages) {
        const rest = o.latencyMs - o.endOfTurnSilenceMs;
        handlers.onMessage({
          type: 'metrics',
          latency: {
            endpointingMs: o.endOfTurnSilenceMs,
            modelFirstTokenMs: Math.round(rest * 0.6),
            voiceFirstByteMs: rest - Math.round(rest * 0.6),
          },
        });
      }
    }
    const from = this.#replyFrame * this.#frameSamples;
    handlers.onAudio(this.#reply.subarray(from, from + this.#frameSamples));
    this.#replyFrame++;
    if (this.#replyFrame * this.#frameSamples >= this.#reply.length) {
      this.#stopReply();
    } else {
      this.#scheduleFrame();
    }
  }

  #stopReply(): void {
    this.#cancelTimer();
    if (this.#replying) {
      this.#replying = false;
      this.#handlers?.onMessage({ type: 'speech-update', role: 'assistant', status: 'stopped' });
    }
  }

  #cancelTimer(): void {
    if (this.#timer !== null) {
      this.#o.clock.clearTimer(this.#timer);
      this.#timer = null;
    }
  }

  #jitter(): number {
    if (this.#o.jitterMs === 0) {
      return 0;
    }
    this.#seed = (this.#seed * 1664525 + 1013904223) >>> 0;
    return (this.#seed / 0x100000000) * this.#o.jitterMs;
  }
}
