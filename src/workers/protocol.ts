/**
 * Typed message protocol between the main thread (WorkerHost) and call worker threads.
 *
 * One MessagePort per call carries the call's messages both ways. Audio travels as
 * transferred ArrayBuffers (never copied). Heartbeats travel per thread over the
 * worker's parentPort (surfaced by Piscina as the pool's 'message' event).
 */
import type { MessagePort } from 'node:worker_threads';

/** The call ended because its worker thread died or stalled (no heartbeat). */
export const ENDED_REASON_WORKER_DIED = 'call.in-progress.error-parlafault-worker-died';
/** The host shut down before the call ended on its own. */
export const ENDED_REASON_WORKER_SHUTDOWN = 'worker-shutdown';
/** The call's handler threw (only that call ends). */
export const ENDED_REASON_HANDLER_ERROR = 'call.in-progress.error-parlafault-worker-handler-threw';
/** The handler could not be found or loaded. */
export const ENDED_REASON_HANDLER_NOT_FOUND =
  'call.in-progress.error-parlafault-worker-handler-not-found';

/** Length of one media frame; the media clock ticks every frame. */
export const FRAME_MS = 20;

export interface CallStartOptions {
  /** Absolute path or file URL of a module exporting `registerCallHandlers(register)`. */
  handlerModule?: string;
  /** PCM sample rate of the call's audio, both directions. Default 16000. */
  sampleRateHz?: number;
  /** Handler-specific parameters (structured-cloneable). */
  params?: unknown;
}

/** The Piscina task payload: one per call; the task resolves when the call ends. */
export interface CallStartTask {
  type: 'start';
  callId: string;
  handlerName: string;
  options: CallStartOptions;
  /** The worker's end of the call's MessageChannel (in the task's transfer list). */
  port: MessagePort;
}

/** What the call task resolves with. */
export interface CallTaskResult {
  endedReason: string;
}

/* ---------- main → worker (over the call port) ---------- */

export interface AudioInMessage {
  type: 'audio';
  /** Int16 PCM samples; transferred. */
  buffer: ArrayBuffer;
}

export interface ControlMessage {
  type: 'control';
  message: unknown;
}

export interface EndMessage {
  type: 'end';
  reason: string;
}

export type HostToWorkerMessage = AudioInMessage | ControlMessage | EndMessage;

/* ---------- worker → main (over the call port) ---------- */

export interface StartedMessage {
  type: 'started';
  callId: string;
  threadId: number;
}

export interface AudioOutMessage {
  type: 'audio';
  /** Int16 PCM samples; transferred. Holds exactly `samples` samples. */
  buffer: ArrayBuffer;
  /** Media-clock time of the tick that produced the frame. */
  nowMs: number;
}

export interface EventMessage {
  type: 'event';
  name: string;
  data: unknown;
}

export interface EndedMessage {
  type: 'ended';
  endedReason: string;
}

export interface ErrorMessage {
  type: 'error';
  message: string;
  stack?: string;
}

export type WorkerToHostMessage =
  StartedMessage | AudioOutMessage | EventMessage | EndedMessage | ErrorMessage;

/* ---------- worker → main (per thread, over parentPort) ---------- */

export interface MediaClockStats {
  ticks: number;
  /** Ticks that ran later than the late threshold after their deadline. */
  lateTicks: number;
  /** Whole frame deadlines skipped because the loop fell more than a frame behind. */
  missedDeadlines: number;
  maxLateMs: number;
}

export interface HeartbeatMessage {
  type: 'parla-worker-heartbeat';
  threadId: number;
  calls: number;
  clock: MediaClockStats;
}

export function isHeartbeatMessage(value: unknown): value is HeartbeatMessage {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { type?: unknown }).type === 'parla-worker-heartbeat' &&
    typeof (value as { threadId?: unknown }).threadId === 'number'
  );
}

/* ---------- handler interface (worker side) ---------- */

export interface CallHandler {
  onStart(nowMs: number): void;
  onAudio(samples: Int16Array, nowMs: number): void;
  /** Fill `out` (one frame) and return how many samples were written (0 = send nothing). */
  onTick(nowMs: number, out: Int16Array): number;
  onControl(message: unknown): void;
  onEnd(reason: string): void;
}

export interface CallHandlerContext {
  callId: string;
  sampleRateHz: number;
  /** Samples in one 20 ms frame at `sampleRateHz`. */
  frameSamples: number;
  params: unknown;
  /** Send an event to the host. */
  emit(name: string, data?: unknown): void;
  /** End the call from inside the handler. */
  end(reason: string): void;
}

export type CallHandlerFactory = (context: CallHandlerContext) => CallHandler;

/** What a handler module passed in `handlerModule` must export. */
export type RegisterCallHandlers = (
  register: (name: string, factory: CallHandlerFactory) => void,
) => void;
