import { secondsToMs } from '../plans.js';
import { ruleMatches, type CompiledEndpointingPlan } from './endpointing-plan.js';
import {
  HeuristicStillSpeakingEstimator,
  type StillSpeakingEstimator,
} from './still-speaking-estimator.js';
import { endsWithNumber, endsWithTerminalPunctuation } from './transcript-features.js';
import { vapiHeuristicWaitMs } from './vapi-heuristic.js';
import { MAX_WAIT_MS } from './wait-function.js';

export type EndOfTurnReason =
  | 'custom-rule'
  | 'smart-livekit'
  | 'smart-vapi'
  | 'custom-endpointing-model'
  | 'transcriber-end-of-turn'
  | 'transcription-punctuation'
  | 'transcription-number'
  | 'transcription-no-punctuation';

export interface EndOfTurnDecision {
  /** When the turn ended: the last speech or transcript time plus waitMs. */
  readonly endOfTurnAtMs: number;
  readonly waitMs: number;
  readonly reason: EndOfTurnReason;
  /** The customer's turn, finals and the last partial joined. */
  readonly transcript: string;
  /** Index of the matching custom endpointing rule, for reason `custom-rule`. */
  readonly ruleIndex: number | null;
  /** x given to the livekit wait function, for reason `smart-livekit`. */
  readonly stillSpeakingProbability: number | null;
}

/** What the caller posts to a custom endpointing model server; answered by onModelTimeout. */
export interface EndpointingModelRequest {
  readonly requestId: number;
  readonly transcript: string;
  readonly lastAssistantMessage: string;
}

export interface EndpointerOptions {
  /** Estimates x for the livekit wait function. Default: HeuristicStillSpeakingEstimator. */
  estimator?: StillSpeakingEstimator;
  /**
   * The transcriber detects end of turn itself (e.g. Deepgram Flux, AssemblyAI). Without a smart
   * plan its signal (onTranscriberEndOfTurn) replaces transcriptionEndpointingPlan; custom rules
   * still come first. Default false.
   */
  transcriberEndOfTurn?: boolean;
}

/**
 * Decides when the customer has finished their turn, following startSpeakingPlan: custom
 * endpointing rules first (first match wins), then the smart plan, then the transcriber's own
 * end-of-turn signal if it has one, then transcriptionEndpointingPlan.
 *
 * Pure and synchronous: time comes in as arguments. A candidate end of turn is computed when VAD
 * reports speech stopped, and recomputed whenever the transcript changes while the customer is
 * silent; it lies waitMs after the later of the speech stop and the last transcript change.
 * Speech starting again cancels it. poll(nowMs) hands the decision out once its time has come
 * and starts a new turn. Without VAD events, transcripts alone drive it.
 */
export class Endpointer {
  private readonly plan: CompiledEndpointingPlan;
  private readonly estimator: StillSpeakingEstimator;
  private readonly transcriberEndOfTurn: boolean;

  private lastAssistantMessage: string;
  private committedText: string;
  private partialText: string;
  private transcript: string;
  private speaking: boolean;
  private lastSpeechStopMs: number;
  private lastTranscriptMs: number;

  private pending: boolean;
  private pendingAtMs: number;
  private pendingWaitMs: number;
  private pendingReason: EndOfTurnReason;
  private pendingRuleIndex: number | null;
  private pendingProbability: number | null;

  /** Id of the model request whose answer is awaited, or 0. */
  private modelRequestId: number;
  private modelRequestTaken: boolean;
  private modelAnchorMs: number;
  private lastModelRequestId: number;

  constructor(plan: CompiledEndpointingPlan, options: EndpointerOptions = {}) {
    this.plan = plan;
    this.estimator = options.estimator ?? new HeuristicStillSpeakingEstimator();
    this.transcriberEndOfTurn = options.transcriberEndOfTurn ?? false;
    this.lastAssistantMessage = '';
    this.committedText = '';
    this.partialText = '';
    this.transcript = '';
    this.speaking = false;
    this.lastSpeechStopMs = -Infinity;
    this.lastTranscriptMs = -Infinity;
    this.pending = false;
    this.pendingAtMs = 0;
    this.pendingWaitMs = 0;
    this.pendingReason = 'transcription-no-punctuation';
    this.pendingRuleIndex = null;
    this.pendingProbability = null;
    this.modelRequestId = 0;
    this.modelRequestTaken = false;
    this.modelAnchorMs = 0;
    this.lastModelRequestId = 0;
  }

  /** The customer's words so far in this turn. */
  get customerTranscript(): string {
    return this.transcript;
  }

  /** When the pending end of turn falls due, or null: for the caller's timer. */
  get pendingEndOfTurnAtMs(): number | null {
    return this.pending ? this.pendingAtMs : null;
  }

  /** True while a custom endpointing model's answer is awaited. */
  get awaitingModel(): boolean {
    return this.modelRequestId !== 0;
  }

  /** The assistant's last message, for `assistant` and `both` rules. */
  setLastAssistantMessage(text: string): void {
    this.lastAssistantMessage = text;
    if (this.pending || this.awaitingModel) {
      this.schedule();
    }
  }

  /** VAD: the customer started speaking. Cancels a pending end of turn. */
  onSpeechStart(_nowMs: number): void {
    this.speaking = true;
    this.cancel();
  }

  /** VAD: the customer stopped speaking. */
  onSpeechStop(nowMs: number): void {
    this.speaking = false;
    this.lastSpeechStopMs = nowMs;
    this.schedule();
  }

  /**
   * A transcript event. A partial replaces the previous partial; a final is appended to the
   * turn and clears the partial. Recomputes the end of turn if the text changed while silent.
   */
  onTranscript(text: string, isFinal: boolean, nowMs: number): void {
    const trimmed = text.trim();
    if (isFinal) {
      this.committedText = joinText(this.committedText, trimmed);
      this.partialText = '';
    } else {
      this.partialText = trimmed;
    }
    const transcript = joinText(this.committedText, this.partialText);
    if (transcript === this.transcript) {
      return;
    }
    this.transcript = transcript;
    this.lastTranscriptMs = nowMs;
    if (!this.speaking) {
      this.schedule();
    }
  }

  /**
   * The transcriber's own end-of-turn signal. Used only when the endpointer was built with
   * `transcriberEndOfTurn` and the plan has no smart plan; a matching custom rule still wins.
   */
  onTranscriberEndOfTurn(nowMs: number): void {
    if (!this.transcriberEndOfTurn || this.plan.smartProvider !== 'none') {
      return;
    }
    if (this.transcript === '' || this.applyRules(this.anchorMs())) {
      return;
    }
    this.setPending(nowMs, 0, 'transcriber-end-of-turn', null, null);
  }

  /**
   * For the custom-endpointing-model plan: the request to send, once per candidate end of turn,
   * or null. The answer goes to onModelTimeout with the same requestId.
   */
  takeModelRequest(): EndpointingModelRequest | null {
    if (this.modelRequestId === 0 || this.modelRequestTaken) {
      return null;
    }
    this.modelRequestTaken = true;
    return {
      requestId: this.modelRequestId,
      transcript: this.transcript,
      lastAssistantMessage: this.lastAssistantMessage,
    };
  }

  /**
   * The model's `timeoutSeconds` for a request; null when the request failed, in which case
   * transcriptionEndpointingPlan decides. Answers to superseded requests are ignored. The wait
   * counts from the same moment as every other wait, not from the answer's arrival.
   */
  onModelTimeout(requestId: number, timeoutSeconds: number | null, _nowMs: number): void {
    if (requestId === 0 || requestId !== this.modelRequestId) {
      return;
    }
    this.modelRequestId = 0;
    const anchorMs = this.modelAnchorMs;
    if (timeoutSeconds === null || !Number.isFinite(timeoutSeconds)) {
      this.applyTranscriptionPlan(anchorMs);
      return;
    }
    const waitMs = Math.min(MAX_WAIT_MS, Math.max(0, secondsToMs(timeoutSeconds)));
    this.setPending(anchorMs + waitMs, waitMs, 'custom-endpointing-model', null, null);
  }

  /** The decision, once nowMs has reached its end of turn; then a new turn begins. */
  poll(nowMs: number): EndOfTurnDecision | null {
    if (!this.pending || nowMs < this.pendingAtMs) {
      return null;
    }
    const decision: EndOfTurnDecision = {
      endOfTurnAtMs: this.pendingAtMs,
      waitMs: this.pendingWaitMs,
      reason: this.pendingReason,
      transcript: this.transcript,
      ruleIndex: this.pendingRuleIndex,
      stillSpeakingProbability: this.pendingProbability,
    };
    this.clearTurn();
    return decision;
  }

  /** Forgets the turn in progress (keeps the last assistant message). */
  clearTurn(): void {
    this.committedText = '';
    this.partialText = '';
    this.transcript = '';
    this.lastSpeechStopMs = -Infinity;
    this.lastTranscriptMs = -Infinity;
    this.cancel();
  }

  private anchorMs(): number {
    return Math.max(this.lastSpeechStopMs, this.lastTranscriptMs);
  }

  private cancel(): void {
    this.pending = false;
    this.modelRequestId = 0;
  }

  private setPending(
    atMs: number,
    waitMs: number,
    reason: EndOfTurnReason,
    ruleIndex: number | null,
    probability: number | null,
  ): void {
    this.pending = true;
    this.pendingAtMs = atMs;
    this.pendingWaitMs = waitMs;
    this.pendingReason = reason;
    this.pendingRuleIndex = ruleIndex;
    this.pendingProbability = probability;
  }

  /** Computes the candidate end of turn for the transcript as it stands. */
  private schedule(): void {
    this.cancel();
    if (this.transcript === '') {
      return;
    }
    const anchorMs = this.anchorMs();
    if (this.applyRules(anchorMs)) {
      return;
    }
    switch (this.plan.smartProvider) {
      case 'livekit': {
        const x = clampProbability(
          this.estimator.estimate(this.transcript, this.lastAssistantMessage),
        );
        const waitMs = this.plan.waitFunction === null ? 0 : this.plan.waitFunction(x);
        this.setPending(anchorMs + waitMs, waitMs, 'smart-livekit', null, x);
        return;
      }
      case 'vapi': {
        const waitMs = vapiHeuristicWaitMs(this.transcript);
        this.setPending(anchorMs + waitMs, waitMs, 'smart-vapi', null, null);
        return;
      }
      case 'custom-endpointing-model':
        this.lastModelRequestId++;
        this.modelRequestId = this.lastModelRequestId;
        this.modelRequestTaken = false;
        this.modelAnchorMs = anchorMs;
        return;
      case 'none':
        if (!this.transcriberEndOfTurn) {
          this.applyTranscriptionPlan(anchorMs);
        }
        return;
    }
  }

  /** Sets the end of turn from the first matching custom rule; false if none matches. */
  private applyRules(anchorMs: number): boolean {
    for (const rule of this.plan.rules) {
      if (ruleMatches(rule, this.lastAssistantMessage, this.transcript)) {
        this.setPending(anchorMs + rule.timeoutMs, rule.timeoutMs, 'custom-rule', rule.index, null);
        return true;
      }
    }
    return false;
  }

  /** The documented order: a trailing number, then punctuation, then no punctuation. */
  private applyTranscriptionPlan(anchorMs: number): void {
    let waitMs: number;
    let reason: EndOfTurnReason;
    if (endsWithNumber(this.transcript)) {
      waitMs = this.plan.onNumberMs;
      reason = 'transcription-number';
    } else if (endsWithTerminalPunctuation(this.transcript)) {
      waitMs = this.plan.onPunctuationMs;
      reason = 'transcription-punctuation';
    } else {
      waitMs = this.plan.onNoPunctuationMs;
      reason = 'transcription-no-punctuation';
    }
    this.setPending(anchorMs + waitMs, waitMs, reason, null, null);
  }
}

function joinText(head: string, tail: string): string {
  if (head === '') {
    return tail;
  }
  return tail === '' ? head : `${head} ${tail}`;
}

/** An estimator's x into [0, 1]; NaN (no opinion) reads as 0.5. */
function clampProbability(x: number): number {
  if (Number.isNaN(x)) {
    return 0.5;
  }
  return Math.min(1, Math.max(0, x));
}
