import { SpeechTracker, type SpeechSegment, type SpeechTrackerOptions } from './speech-tracker.js';

/**
 * Per-turn measures of a conversation, from the speech found in the caller's sent audio and the
 * assistant's received audio (see speech-tracker.ts for the time model). Pure: no Parla events.
 */
export type CallerTurnKind = 'speech' | 'backchannel' | 'interruption';

/** What the caller sent for one scripted turn: its audio went out between the two times. */
export interface TurnMark {
  index: number;
  kind: CallerTurnKind;
  /** Usually the WAV's name. */
  label: string;
  sentStartMs: number;
  sentEndMs: number;
}

export interface MeasureOptions {
  /**
   * The barge-in window: an assistant stop is put down to a backchannel only when the assistant
   * audio ends within this of the backchannel's onset. Default 1000 ms.
   */
  falseInterruptionWindowMs?: number;
  /**
   * The natural length of the replies backchannels land in (known for scripted replies: the
   * vendor simulators' answer). With it, a stop is a false interruption only when the reply's
   * audio ended more than `replyEndToleranceMs` before its start + this.
   */
  expectedReplyMs?: number;
  /** See expectedReplyMs. Default 250 ms (segment edges, the last frame, late chunks). */
  replyEndToleranceMs?: number;
  /**
   * Arrival times of the server's `clear` messages (its "stop playback" event), given only when
   * the transport carries the server's messages. Used when expectedReplyMs is not known: a stop
   * counts when a `clear` came between the backchannel's onset and the end of the window.
   */
  clearsAtMs?: readonly number[];
  /** Latency the scenario itself adds (simulated vendors, configured waits): subtracted for addedMs. */
  expectedLatencyMs?: number;
}

export interface TurnMeasures {
  index: number;
  kind: CallerTurnKind;
  label: string;
  /** The caller's speech in this turn, found in the sent audio (null if none was found). */
  callerStartMs: number | null;
  callerEndMs: number | null;
  /** Caller end of speech → first assistant audio after it (speech and interruption turns). */
  voiceToVoiceMs: number | null;
  /** voiceToVoiceMs minus the expected latency, when one is given. */
  addedMs: number | null;
  /** The caller started while the assistant was speaking. */
  duringAssistantSpeech: boolean;
  /** Interruptions: caller speech onset → the assistant audio it landed in stops. */
  bargeInStopMs: number | null;
  /** Interruptions: caller speech onset → the server's `clear` message (filled by the runner). */
  clearMs: number | null;
  /**
   * Backchannels that started while assistant audio was playing: true when that audio stopped
   * within the barge-in window of the onset and before the reply's natural end (from
   * expectedReplyMs, or else the server's `clear`); false when it played on or ended naturally;
   * null when the backchannel did not land in assistant audio, or when a stop within the window
   * cannot be told from a natural end (neither a reply length nor server events are known).
   */
  falseInterruption: boolean | null;
  /** Backchannels during assistant speech: onset → the end of the assistant audio it landed in. */
  assistantStoppedAfterMs: number | null;
  /** The assistant started speaking while the caller was mid-turn (between onset and end). */
  cutOff: boolean;
  /** Assistant audio from this turn's start to the next turn's (inside speech only). */
  lateChunks: number;
  maxLateByMs: number;
  holes: number;
  holeMs: number;
  /** Quiet stretches inside assistant speech (see SpeechTrackerOptions.minSilentGapMs). */
  silentGaps: number;
  /** Per-stage timings the server reported for this turn, if any (ms by stage name). */
  stagesMs: Record<string, number> | null;
}

export interface ConversationMeasures {
  turns: TurnMeasures[];
  callerSegments: SpeechSegment[];
  assistantSegments: SpeechSegment[];
  /** Over the whole call, including audio before the first turn. */
  lateChunks: number;
  holes: number;
}

export interface DirectionTrack {
  segments: readonly SpeechSegment[];
  holes: readonly { startMs: number; endMs: number }[];
  lateChunks: readonly { atMs: number; lateByMs: number }[];
  silentGaps: readonly { startMs: number; endMs: number }[];
}

export interface AudioChunk {
  /** Time of the chunk's first sample (arrival for received audio, capture for sent audio). */
  atMs: number;
  samples: Int16Array;
}

/**
 * Runs SpeechTrackers over both timelines, then measureTurns. The caller's audio is tracked turn by
 * turn (the chunks sent within each mark), so speech that follows the previous turn closely is
 * still found as this turn's.
 */
export function measureConversation(
  sent: readonly AudioChunk[],
  received: readonly AudioChunk[],
  marks: readonly TurnMark[],
  tracker: Omit<SpeechTrackerOptions, 'onSpeechStart' | 'onSpeechEnd'>,
  options: MeasureOptions = {},
): ConversationMeasures {
  const callerSegments = marks.flatMap(
    (mark) =>
      track(
        sent.filter((c) => c.atMs >= mark.sentStartMs && c.atMs < mark.sentEndMs),
        tracker,
      ).segments,
  );
  return measureTurns(callerSegments, track(received, tracker), marks, options);
}

/** See TurnMeasures.falseInterruption. `landedIn` is the assistant audio the onset fell in. */
function stoppedByBackchannel(
  landedIn: SpeechSegment,
  onsetMs: number,
  windowMs: number,
  options: MeasureOptions,
): boolean | null {
  if (landedIn.endMs - onsetMs > windowMs) {
    return false;
  }
  if (options.expectedReplyMs !== undefined) {
    const naturalEndMs = landedIn.startMs + options.expectedReplyMs;
    return landedIn.endMs < naturalEndMs - (options.replyEndToleranceMs ?? 250);
  }
  if (options.clearsAtMs !== undefined) {
    return options.clearsAtMs.some((atMs) => atMs >= onsetMs && atMs <= onsetMs + windowMs);
  }
  return null;
}

function track(
  chunks: readonly AudioChunk[],
  options: Omit<SpeechTrackerOptions, 'onSpeechStart' | 'onSpeechEnd'>,
): SpeechTracker {
  const tracker = new SpeechTracker(options);
  for (const chunk of chunks) {
    tracker.push(chunk.samples, chunk.atMs);
  }
  tracker.finish();
  return tracker;
}

/**
 * `callerSegments`: the caller's speech, found in each turn's own audio; `assistant`: what the
 * SpeechTracker found in the received audio.
 */
export function measureTurns(
  callerSegments: readonly SpeechSegment[],
  assistant: DirectionTrack,
  marks: readonly TurnMark[],
  options: MeasureOptions = {},
): ConversationMeasures {
  const windowMs = options.falseInterruptionWindowMs ?? 1000;
  const ordered = [...marks].sort((a, b) => a.sentStartMs - b.sentStartMs);
  const turns = ordered.map((mark, position): TurnMeasures => {
    const next = ordered[position + 1];
    const own = callerSegments.filter(
      (s) => s.startMs >= mark.sentStartMs && s.startMs <= mark.sentEndMs,
    );
    const callerStartMs = own[0]?.startMs ?? null;
    const callerEndMs = own.length > 0 ? own[own.length - 1]!.endMs : null;
    const measures: TurnMeasures = {
      index: mark.index,
      kind: mark.kind,
      label: mark.label,
      callerStartMs,
      callerEndMs,
      voiceToVoiceMs: null,
      addedMs: null,
      duringAssistantSpeech: false,
      bargeInStopMs: null,
      clearMs: null,
      falseInterruption: null,
      assistantStoppedAfterMs: null,
      cutOff: false,
      lateChunks: 0,
      maxLateByMs: 0,
      holes: 0,
      holeMs: 0,
      silentGaps: 0,
      stagesMs: null,
    };
    if (callerStartMs === null || callerEndMs === null) {
      return measures;
    }
    const landedIn = assistant.segments.find(
      (s) => s.startMs <= callerStartMs && callerStartMs < s.endMs,
    );
    measures.duringAssistantSpeech = landedIn !== undefined;
    if (mark.kind === 'interruption' && landedIn !== undefined) {
      measures.bargeInStopMs = landedIn.endMs - callerStartMs;
    }
    if (mark.kind === 'backchannel' && landedIn !== undefined) {
      measures.assistantStoppedAfterMs = landedIn.endMs - callerStartMs;
      measures.falseInterruption = stoppedByBackchannel(landedIn, callerStartMs, windowMs, options);
    }
    if (mark.kind !== 'backchannel') {
      measures.cutOff = assistant.segments.some(
        (s) => s.startMs > callerStartMs && s.startMs < callerEndMs,
      );
      const replyEndMs = next?.sentStartMs ?? Number.POSITIVE_INFINITY;
      const reply = assistant.segments.find(
        (s) => s.startMs >= callerEndMs && s.startMs < replyEndMs,
      );
      if (reply !== undefined) {
        measures.voiceToVoiceMs = reply.startMs - callerEndMs;
        if (options.expectedLatencyMs !== undefined) {
          measures.addedMs = measures.voiceToVoiceMs - options.expectedLatencyMs;
        }
      }
    }
    const fromMs = mark.sentStartMs;
    const toMs = next?.sentStartMs ?? Number.POSITIVE_INFINITY;
    for (const late of assistant.lateChunks) {
      if (late.atMs >= fromMs && late.atMs < toMs) {
        measures.lateChunks++;
        measures.maxLateByMs = Math.max(measures.maxLateByMs, late.lateByMs);
      }
    }
    for (const hole of assistant.holes) {
      if (hole.startMs >= fromMs && hole.startMs < toMs) {
        measures.holes++;
        measures.holeMs += hole.endMs - hole.startMs;
      }
    }
    for (const gap of assistant.silentGaps) {
      if (gap.startMs >= fromMs && gap.startMs < toMs) {
        measures.silentGaps++;
      }
    }
    return measures;
  });
  return {
    turns,
    callerSegments: [...callerSegments],
    assistantSegments: [...assistant.segments],
    lateChunks: assistant.lateChunks.length,
    holes: assistant.holes.length,
  };
}
