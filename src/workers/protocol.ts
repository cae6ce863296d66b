/**
 * Typed message protocol between the main thread (WorkerHost) and call worker threads.
 *
 * One MessagePort per call carries the call's messages both ways. Audio travels as
 * transferred ArrayBuffers (never copied). The worker allocates one 20 ms buffer per frame it
 * actually sends (a silent tick sends and allocates nothing): measured with Node 20 on one
 * MessageChannel, transferring a fresh 640-byte buffer costs about 3.8 µs per frame against 2.8 µs
 * for cloning a reused one (docs/benchmarks.md, "Call worker"), so the
 * allocation is not worth a buffer-return protocol. Heartbeats travel per thread over the
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
  /** Share (0–1) of the time since the previous heartbeat the thread's event loop was busy. */
  eventLoopUtilization: number;
  /** Thread-wide figures handlers published with `setThreadStats` (e.g. the Silero scheduler). */
  stats: Record<string, unknown>;
  /**
   * The thread is about to block (loading a handler module, which may compile code and create
   * an ONNX session): the host waits this long, instead of its heartbeat timeout, for the next
   * heartbeat. Repeated, as the time left, by the heartbeats sent while the load goes on.
   */
  busyForMs?: number;
  /**
   * One Int32 counting the thread's onnxruntime calls in progress (see
   * src/pipeline/vad/session-load-gate.ts): the host never stops a thread while it is non-zero.
   */
  ortActivity?: SharedArrayBuffer;
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
  /** Samples in one 20 ms frame at `sampleRateHz`, rounded up (the most a tick may write). */
  frameSamples: number;
  params: unknown;
  /** Send an event to the host. */
  emit(name: string, data?: unknown): void;
  /** End the call from inside the handler. */
  end(reason: string): void;
  /**
   * Runs `hook` on every tick of the thread's media clock, after every call ticked. Thread-wide:
   * adding the same function again (from another call) does nothing.
   */
  addTickHook(hook: (nowMs: number) => void): void;
  /** Publishes thread-wide figures in every heartbeat under `name` (last reader wins). */
  setThreadStats(name: string, read: () => unknown): void;
  /**
   * Ticks this call at once, outside the clock's schedule (its frame, if any, goes out now); the
   * clock's own ticks go on as before. For the first frame of a reply, so it need not wait for
   * the next tick.
   */
  tickNow(): void;
  /**
   * Runs `hook` once when the host shuts the thread down (or replaces it), before the thread is
   * stopped: for native resources that must be freed first (an ONNX session). Thread-wide: adding
   * the same function again does nothing.
   */
  addShutdownHook(hook: () => Promise<void> | void): void;
}

/**
 * Host ↔ threads, on a BroadcastChannel named by `workerData.controlChannel` (Piscina owns the
 * threads' parentPort input): the host asks one thread (or all: threadId null) to release its
 * native resources; each answers once its shutdown hooks have run.
 */
export interface ReleaseRequest {
  type: 'parla-release';
  threadId: number | null;
}

export interface ReleasedNotice {
  type: 'parla-released';
  threadId: number;
}

export function isReleaseRequest(value: unknown): value is ReleaseRequest {
  const v = value as Partial<ReleaseRequest> | null;
  return typeof v === 'object' && v !== null && v.type === 'parla-release';
}

export function isReleasedNotice(value: unknown): value is ReleasedNotice {
  const v = value as Partial<ReleasedNotice> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    v.type === 'parla-released' &&
    typeof v.threadId === 'number'
  );
}

export type CallHandlerFactory = (context: CallHandlerContext) => CallHandler;

/** What a handler module passed in `handlerModule` must export. */
export type RegisterCallHandlers = (
  register: (name: string, factory: CallHandlerFactory) => void,
) => void;
