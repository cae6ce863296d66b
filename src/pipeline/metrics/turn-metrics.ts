/** Latencies of one completed turn, in ms (null when a stage did not happen, e.g. no model call). */
export interface TurnLatency {
  turn: number;
  /** Caller's last speech → end-of-turn decision. */
  endpointingMs: number | null;
  /** Caller's last speech → final transcript. */
  transcriberFinalisationMs: number | null;
  /** Model request → first token. */
  modelFirstTokenMs: number | null;
  /** First voice request → first audio byte. */
  voiceFirstByteMs: number | null;
  /** Last caller audio frame in → first assistant audio frame out. */
  voiceToVoiceMs: number;
  /** Caller's last speech → the VAD's speech-stop decision (its hold included). */
  vadStopMs: number | null;
  /** Caller's last speech → the reply's model request. */
  toModelRequestMs: number | null;
  /** Caller's last speech → the reply's first voice audio. */
  toVoiceFirstByteMs: number | null;
}

export interface LatencySummary {
  count: number;
  p50: number;
  p95: number;
  p99: number;
}

const NONE = -1;

/**
 * Collects the timestamps of one call's turns and turns them into per-turn latencies. The
 * pipeline calls the `mark…` methods with its media clock; a turn completes when the first
 * assistant audio frame of the reply goes out. Only the first mark of each kind in a turn counts.
 */
export class TurnMetrics {
  #callerAudioEndMs = NONE;
  #vadStopMs = NONE;
  #transcriptFinalMs = NONE;
  #endOfTurnMs = NONE;
  #modelRequestMs = NONE;
  #modelFirstTokenMs = NONE;
  #voiceRequestMs = NONE;
  #voiceFirstByteMs = NONE;
  readonly #turns: TurnLatency[] = [];

  /** The caller's speech stopped (VAD), at the time of the last frame with speech. Restarts the turn. */
  markCallerAudioEnd(atMs: number): void {
    this.#reset();
    this.#callerAudioEndMs = atMs;
  }

  /** The VAD decided that the caller stopped (after markCallerAudioEnd). */
  markSpeechStopDecided(atMs: number): void {
    this.#vadStopMs = first(this.#vadStopMs, atMs);
  }

  /** The caller spoke again before the reply: the pending turn is abandoned. */
  markCallerSpeechResumed(): void {
    this.#reset();
  }

  markTranscriptFinal(atMs: number): void {
    this.#transcriptFinalMs = first(this.#transcriptFinalMs, atMs);
  }

  markEndOfTurn(atMs: number): void {
    this.#endOfTurnMs = first(this.#endOfTurnMs, atMs);
  }

  markModelRequest(atMs: number): void {
    this.#modelRequestMs = first(this.#modelRequestMs, atMs);
  }

  markModelFirstToken(atMs: number): void {
    this.#modelFirstTokenMs = first(this.#modelFirstTokenMs, atMs);
  }

  markVoiceRequest(atMs: number): void {
    this.#voiceRequestMs = first(this.#voiceRequestMs, atMs);
  }

  markVoiceFirstByte(atMs: number): void {
    this.#voiceFirstByteMs = first(this.#voiceFirstByteMs, atMs);
  }

  /** The first assistant frame of the reply went out: completes the turn (once). */
  markAssistantAudioOut(atMs: number): TurnLatency | null {
    if (this.#callerAudioEndMs === NONE) {
      return null;
    }
    const from = this.#callerAudioEndMs;
    const turn: TurnLatency = {
      turn: this.#turns.length,
      endpointingMs: span(from, this.#endOfTurnMs),
      transcriberFinalisationMs: span(from, this.#transcriptFinalMs),
      modelFirstTokenMs: span(this.#modelRequestMs, this.#modelFirstTokenMs),
      voiceFirstByteMs: span(this.#voiceRequestMs, this.#voiceFirstByteMs),
      voiceToVoiceMs: atMs - from,
      vadStopMs: span(from, this.#vadStopMs),
      toModelRequestMs: span(from, this.#modelRequestMs),
      toVoiceFirstByteMs: span(from, this.#voiceFirstByteMs),
    };
    this.#turns.push(turn);
    this.#reset();
    return turn;
  }

  get turns(): readonly TurnLatency[] {
    return this.#turns;
  }

  /** Percentiles of one latency over the completed turns (nearest-rank), or null with none. */
  summary(field: Exclude<keyof TurnLatency, 'turn'>): LatencySummary | null {
    const values = this.#turns
      .map((t) => t[field])
      .filter((v): v is number => v !== null)
      .sort((a, b) => a - b);
    if (values.length === 0) {
      return null;
    }
    return {
      count: values.length,
      p50: rank(values, 0.5),
      p95: rank(values, 0.95),
      p99: rank(values, 0.99),
    };
  }

  #reset(): void {
    this.#callerAudioEndMs = NONE;
    this.#vadStopMs = NONE;
    this.#transcriptFinalMs = NONE;
    this.#endOfTurnMs = NONE;
    this.#modelRequestMs = NONE;
    this.#modelFirstTokenMs = NONE;
    this.#voiceRequestMs = NONE;
    this.#voiceFirstByteMs = NONE;
  }
}

function first(current: number, atMs: number): number {
  return current === NONE ? atMs : current;
}

function span(fromMs: number, toMs: number): number | null {
  return fromMs === NONE || toMs === NONE ? null : toMs - fromMs;
}

function rank(sorted: readonly number[], quantile: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(quantile * sorted.length) - 1));
  return sorted[index] ?? 0;
}
