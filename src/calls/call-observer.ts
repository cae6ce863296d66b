import type { Doc } from '../store/resource-store.js';

/** One pipeline event as it reaches the main thread (see src/pipeline/events.ts). */
export interface ObservedEvent {
  readonly type: string;
  /** Media-clock time of the event, ms. */
  readonly atMs: number;
  readonly [field: string]: unknown;
}

export interface ToolCallRequest {
  readonly id: string;
  readonly name: string;
  /** JSON text as the model produced it. */
  readonly arguments: string;
}

export interface ToolCallResult {
  readonly toolCallId: string;
  readonly name?: string;
  readonly result?: string;
  readonly error?: string;
}

export interface TransferDestinationRequest {
  /** The tool call that asked for the transfer, when a tool did (absent for a control message). */
  readonly toolCall?: ToolCallRequest;
}

export interface TransferDestinationReply {
  readonly destination?: Doc;
  readonly message?: string;
  readonly error?: string;
}

/**
 * What a running call tells the reporting side (server messages, artifacts, costs). The call
 * session calls these in order; none of them may throw. Implemented in src/calls/reporting/.
 */
export interface CallObserver {
  /** The call's status changed and was persisted; `call` is the stored call after the change. */
  onStatus(call: Doc): void;
  /** An event the pipeline reported, in order. */
  onPipelineEvent(event: ObservedEvent): void;
  /**
   * Audio as it crossed the transport: `user` the caller's, `assistant` what was played, PCM16
   * mono. The samples are only valid during the call (copy to keep).
   */
  onAudio(role: 'user' | 'assistant', samples: Int16Array, sampleRateHz: number): void;
  /** The model asked for tools; resolves with one result per call (errors as results). */
  onToolCalls(toolCalls: readonly ToolCallRequest[], turnId: number): Promise<ToolCallResult[]>;
  /**
   * A transfer with no destination of its own: asks the server with a
   * `transfer-destination-request` message. Resolves with the server's `destination`, or an
   * `error` (spoken to the caller) or neither when no server answered usefully. Never rejects.
   */
  onTransferDestinationRequest?(
    request: TransferDestinationRequest,
  ): Promise<TransferDestinationReply>;
  /**
   * The call ended (`call` has status ended, endedReason, endedAt). Resolves with the fields to
   * store on the call (artifact, costs, cost, analysis); sends the end-of-call report after.
   */
  onEnded(call: Doc): Promise<Doc>;
}
