import type { ModelMessage, ModelToolCall } from '../providers/llm/model-provider.js';
import type { TurnLatency } from './metrics/turn-metrics.js';

/*
 * What a CallPipeline reports to its owner, in the order things happen, each stamped with the
 * media clock (`atMs`, the `nowMs` of the frame or tick during which it happened). The names and
 * fields follow the platform's server/client messages of the same names, so the owner can forward
 * them with little more than a rename.
 */

export type SpeechRole = 'user' | 'assistant';

export interface SpeechUpdateEvent {
  readonly type: 'speech-update';
  readonly atMs: number;
  readonly role: SpeechRole;
  readonly status: 'started' | 'stopped';
  /** Assistant messages started so far (0 before the first). */
  readonly turn: number;
}

export interface TranscriptEvent {
  readonly type: 'transcript';
  readonly atMs: number;
  readonly role: SpeechRole;
  readonly transcriptType: 'partial' | 'final';
  readonly transcript: string;
}

export interface ModelOutputEvent {
  readonly type: 'model-output';
  readonly atMs: number;
  /** A text delta as the model streamed it. */
  readonly output: string;
  readonly turnId: number;
}

/** Tokens one model request used, as the vendor reported them (for costs). */
export interface ModelUsageEvent {
  readonly type: 'model-usage';
  readonly atMs: number;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly turnId: number;
}

export interface VoiceInputEvent {
  readonly type: 'voice-input';
  readonly atMs: number;
  /** A formatted chunk sent to the voice. */
  readonly input: string;
}

export interface ConversationUpdateEvent {
  readonly type: 'conversation-update';
  readonly atMs: number;
  /** The whole history (system prompt first), a copy. */
  readonly messages: readonly ModelMessage[];
}

export interface UserInterruptedEvent {
  readonly type: 'user-interrupted';
  readonly atMs: number;
  readonly turnId: number;
}

/**
 * The model's reply ended asking for tools: they are being run (the owner's runTools), and the
 * model is asked again with their results.
 */
export interface ToolCallsEvent {
  readonly type: 'tool-calls';
  readonly atMs: number;
  readonly turnId: number;
  readonly toolCalls: readonly ModelToolCall[];
}

/** No assistant audio for hangNotificationMs after the customer's turn ended. */
export interface HangEvent {
  readonly type: 'hang';
  readonly atMs: number;
}

export interface CallEndedEvent {
  readonly type: 'call-ended';
  readonly atMs: number;
  readonly endedReason: string;
}

export interface MetricsEvent {
  readonly type: 'metrics';
  readonly atMs: number;
  readonly latency: TurnLatency;
}

export type PipelineEvent =
  | SpeechUpdateEvent
  | TranscriptEvent
  | ModelOutputEvent
  | ModelUsageEvent
  | VoiceInputEvent
  | ConversationUpdateEvent
  | UserInterruptedEvent
  | ToolCallsEvent
  | HangEvent
  | CallEndedEvent
  | MetricsEvent;

/** Receives every event, in order. Must not throw. */
export type PipelineEventSink = (event: PipelineEvent) => void;
