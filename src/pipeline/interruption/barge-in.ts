import { secondsToMs, type ResolvedStopSpeakingPlan } from '../plans.js';
import { normalizeWords, PhraseMatcher } from './phrase-matcher.js';

export type InterruptionReason = 'voice-seconds' | 'num-words' | 'interruption-phrase';

export interface InterruptionDecision {
  readonly interrupt: true;
  readonly reason: InterruptionReason;
  /** When the interruption was decided; output stays blocked until atMs + backoff. */
  readonly atMs: number;
  /** The customer's words heard over the assistant so far (may be empty for voice-seconds). */
  readonly transcript: string;
}

export interface BargeInOptions {
  /** The assistant's `firstMessageInterruptionsEnabled`. Default false, as documented. */
  firstMessageInterruptionsEnabled?: boolean;
}

/**
 * Decides whether customer speech during assistant speech interrupts it (stopSpeakingPlan):
 *
 * - numWords 0: interrupt once voice activity has lasted voiceSeconds without a break, counted
 *   from the later of the voice's start and the assistant's start.
 * - numWords > 0: interrupt once the customer's transcript, since the assistant started, has
 *   numWords words.
 * - In both modes a transcript made only of acknowledgement phrases ("okay", "yeah okay") never
 *   interrupts, and one containing an interruption phrase ("wait", "don't") interrupts at once.
 *   Interruption phrases are checked first, so a phrase on both lists interrupts.
 * - With numWords 0 the transcript usually arrives after voiceSeconds has passed; an
 *   acknowledgement holds the voice trigger back only if its transcript came first, and only
 *   for the run of voice it was heard in.
 * - After an interruption, assistant output is blocked for backoffSeconds (canSpeakAt).
 * - The first message is uninterruptible unless firstMessageInterruptionsEnabled.
 *
 * Pure and synchronous. The VAD path (onVadFrame, onSpeechStart/Stop, poll) allocates nothing
 * unless it returns a decision; each message is interrupted at most once.
 */
export class BargeInDetector {
  private readonly numWords: number;
  private readonly voiceMs: number;
  private readonly backoffMs: number;
  private readonly firstMessageInterruptionsEnabled: boolean;
  private readonly phrases: PhraseMatcher;

  private assistantSpeaking: boolean;
  private interruptible: boolean;
  private assistantStartMs: number;
  private voiceActive: boolean;
  private voiceStartMs: number;
  private committedText: string;
  private transcript: string;
  /** The transcript so far is only acknowledgements: the voice trigger is held back. */
  private acknowledgementOnly: boolean;
  private blockedUntil: number;

  constructor(plan: ResolvedStopSpeakingPlan, options: BargeInOptions = {}) {
    this.numWords = plan.numWords;
    this.voiceMs = secondsToMs(plan.voiceSeconds);
    this.backoffMs = secondsToMs(plan.backoffSeconds);
    this.firstMessageInterruptionsEnabled = options.firstMessageInterruptionsEnabled ?? false;
    this.phrases = new PhraseMatcher(plan.acknowledgementPhrases, plan.interruptionPhrases);
    this.assistantSpeaking = false;
    this.interruptible = false;
    this.assistantStartMs = 0;
    this.voiceActive = false;
    this.voiceStartMs = 0;
    this.committedText = '';
    this.transcript = '';
    this.acknowledgementOnly = false;
    this.blockedUntil = -Infinity;
  }

  /** True while assistant audio is playing and may be interrupted. */
  get interruptibleNow(): boolean {
    return this.assistantSpeaking && this.interruptible;
  }

  /** Assistant output is blocked before this time (-Infinity before any interruption). */
  get blockedUntilMs(): number {
    return this.blockedUntil;
  }

  /** False while the backoff after an interruption lasts. */
  canSpeakAt(nowMs: number): boolean {
    return nowMs >= this.blockedUntil;
  }

  /**
   * Assistant audio started playing. Resets the customer transcript counted against it.
   * `interruptible`, when given, decides for this message (a `say` with interruptionsEnabled)
   * instead of the first-message rule.
   */
  onAssistantSpeechStart(nowMs: number, isFirstMessage = false, interruptible?: boolean): void {
    this.assistantSpeaking = true;
    this.interruptible =
      interruptible ?? (!isFirstMessage || this.firstMessageInterruptionsEnabled);
    this.assistantStartMs = nowMs;
    this.committedText = '';
    this.transcript = '';
    this.acknowledgementOnly = false;
  }

  /** Assistant audio finished (or was stopped). */
  onAssistantSpeechEnd(_nowMs: number): void {
    this.assistantSpeaking = false;
  }

  /** VAD: customer voice started at nowMs. With voiceSeconds 0 this may interrupt at once. */
  onSpeechStart(nowMs: number): InterruptionDecision | null {
    if (!this.voiceActive) {
      this.startVoice(nowMs);
    }
    return this.checkVoice(nowMs);
  }

  /** VAD: customer voice stopped; the next voice counts from zero. */
  onSpeechStop(_nowMs: number): void {
    this.voiceActive = false;
  }

  /**
   * One VAD frame covering [frameStartMs, frameStartMs + frameDurationMs). Twenty 10 ms speech
   * frames in a row make 200 ms of continuous voice.
   */
  onVadFrame(
    isSpeech: boolean,
    frameStartMs: number,
    frameDurationMs: number,
  ): InterruptionDecision | null {
    if (!isSpeech) {
      this.voiceActive = false;
      return null;
    }
    if (!this.voiceActive) {
      this.startVoice(frameStartMs);
    }
    return this.checkVoice(frameStartMs + frameDurationMs);
  }

  /** Checks the voice trigger at nowMs (for event-driven VAD, between events). */
  poll(nowMs: number): InterruptionDecision | null {
    return this.checkVoice(nowMs);
  }

  /**
   * A transcript event of the customer's speech. A partial replaces the previous partial; a
   * final is kept. Only transcripts heard while the assistant speaks count.
   */
  onTranscript(text: string, isFinal: boolean, nowMs: number): InterruptionDecision | null {
    if (!this.interruptibleNow) {
      return null;
    }
    const trimmed = text.trim();
    const transcript = joinText(this.committedText, trimmed);
    if (isFinal) {
      this.committedText = transcript;
    }
    this.transcript = transcript;
    const words = normalizeWords(transcript);
    if (this.phrases.containsInterruptionPhrase(words)) {
      return this.interrupt('interruption-phrase', nowMs);
    }
    this.acknowledgementOnly = this.phrases.isOnlyAcknowledgements(words);
    if (this.acknowledgementOnly) {
      return null;
    }
    if (this.numWords > 0) {
      return words.length >= this.numWords ? this.interrupt('num-words', nowMs) : null;
    }
    return this.checkVoice(nowMs);
  }

  /** Forgets everything, including a backoff in progress. */
  reset(): void {
    this.assistantSpeaking = false;
    this.interruptible = false;
    this.voiceActive = false;
    this.committedText = '';
    this.transcript = '';
    this.acknowledgementOnly = false;
    this.blockedUntil = -Infinity;
  }

  /** A new run of voice: its words are not known yet, so earlier acknowledgements stop holding. */
  private startVoice(atMs: number): void {
    this.voiceActive = true;
    this.voiceStartMs = atMs;
    this.acknowledgementOnly = false;
  }

  private checkVoice(nowMs: number): InterruptionDecision | null {
    if (
      this.numWords > 0 ||
      !this.voiceActive ||
      !this.assistantSpeaking ||
      !this.interruptible ||
      this.acknowledgementOnly
    ) {
      return null;
    }
    const fromMs = Math.max(this.voiceStartMs, this.assistantStartMs);
    return nowMs - fromMs >= this.voiceMs ? this.interrupt('voice-seconds', nowMs) : null;
  }

  private interrupt(reason: InterruptionReason, nowMs: number): InterruptionDecision {
    this.assistantSpeaking = false;
    this.blockedUntil = nowMs + this.backoffMs;
    return { interrupt: true, reason, atMs: nowMs, transcript: this.transcript };
  }
}

function joinText(head: string, tail: string): string {
  if (head === '') {
    return tail;
  }
  return tail === '' ? head : `${head} ${tail}`;
}
