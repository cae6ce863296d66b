/**
 * How a simulated caller reaches a call. Each transport (websocket now; SIP/RTP and WebRTC later)
 * is a small adapter: it creates or joins the call, carries PCM16 mono frames both ways at the
 * call's rate, and passes the server's JSON messages up. Pacing, scripts and measuring stay in
 * the harness.
 */
export interface CallerTransport {
  /** Creates or joins the call. Rejects with a HarnessError when the call cannot start. */
  connect(handlers: TransportHandlers): Promise<ConnectedCall>;
  /**
   * Sends one frame of caller audio. The harness never changes `samples` after the call, so an
   * adapter may queue the view without copying it.
   */
  sendAudio(samples: Int16Array): void;
  /** Sends a control message (JSON), where the transport has a channel for them. */
  sendMessage(message: Record<string, unknown>): void;
  /** Hangs up and releases everything; resolves when done. Safe to call more than once. */
  close(): Promise<void>;
  /**
   * After close: the per-stage timings (ms by stage) the server recorded for each answered turn,
   * in order, where the transport can fetch them; empty when there are none.
   */
  turnStages?(): Promise<Record<string, number>[]>;
}

export interface TransportHandlers {
  /** Assistant audio as it arrives, PCM16 mono at the call's rate (valid during the call only). */
  onAudio(samples: Int16Array): void;
  /** A JSON message from the server (client messages such as speech-update, clear). */
  onMessage(message: Record<string, unknown>): void;
  /** The call ended from the far side or the connection broke. */
  onClose(reason: string): void;
}

export interface ConnectedCall {
  callId: string;
  sampleRateHz: number;
}

/** Makes the transport of the `callIndex`th simulated call. */
export type TransportFactory = (callIndex: number) => CallerTransport;

export type HarnessErrorCode =
  | 'ERR_BENCH_CONNECT'
  | 'ERR_BENCH_PROTOCOL'
  | 'ERR_BENCH_SCRIPT'
  | 'ERR_BENCH_TIMEOUT'
  | 'ERR_BENCH_RESULT'
  | 'ERR_BENCH_USAGE';

/** Errors the harness raises on purpose, with a stable code. */
export class HarnessError extends Error {
  readonly code: HarnessErrorCode;

  constructor(code: HarnessErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'HarnessError';
    this.code = code;
  }
}
