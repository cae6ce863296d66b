/**
 * WorkerHost: runs calls in a Piscina pool of worker threads. One long-lived task per
 * call (it resolves when the call ends); many calls share a thread
 * (`concurrentTasksPerWorker`). A per-thread heartbeat watchdog ends the calls of a
 * thread that died or stalled with ENDED_REASON_WORKER_DIED and terminates it;
 * Piscina then starts a replacement (minThreads = maxThreads).
 *
 * TypeScript workers: when this module runs from a .ts file (vitest, tsx), the worker
 * entry is call-worker-tsx.ts and threads start with `--require tsx/cjs` (see that
 * file for why); from the compiled dist/ it uses call-worker.js and plain node.
 */
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { BroadcastChannel, MessageChannel, type Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { claimOrtStop, ortBusy } from '../pipeline/vad/session-load-gate.js';
import { CallChannel } from './call-channel.js';
import {
  ENDED_REASON_WORKER_DIED,
  ENDED_REASON_WORKER_SHUTDOWN,
  isHeartbeatMessage,
  isReleasedNotice,
  type CallStartOptions,
  type CallStartTask,
  type CallTaskResult,
  type HeartbeatMessage,
} from './protocol.js';

export interface WorkerHostOptions {
  /** Worker threads (default: available parallelism). */
  threads?: number;
  /** Calls one thread may run at once (default 1000). */
  maxCallsPerThread?: number;
  heartbeatIntervalMs?: number;
  /** No heartbeat for this long → the thread is declared dead (default 2000). */
  heartbeatTimeoutMs?: number;
  /** Worker entry override (absolute path). */
  filename?: string;
  execArgv?: string[];
}

export interface WorkerHostCloseOptions {
  /** How long calls may keep running before they are ended with `worker-shutdown`. */
  drainMs?: number;
  /** How long to wait for workers to confirm the shutdown end (default 1000). */
  endTimeoutMs?: number;
}

export interface WorkerThreadStats {
  threadId: number;
  lastHeartbeatAgoMs: number;
  heartbeat: HeartbeatMessage | undefined;
}

interface ThreadState {
  lastHeartbeatMs: number;
  heartbeat: HeartbeatMessage | undefined;
  /** How long after lastHeartbeatMs the thread counts as stalled. */
  timeoutMs: number;
  /** The thread's count of onnxruntime calls in progress (see session-load-gate.ts). */
  ortActivity: Int32Array | null;
}

function defaultWorkerEntry(): { filename: string; execArgv: string[] } {
  const isTs = import.meta.url.endsWith('.ts');
  const filename = fileURLToPath(
    new URL(isTs ? './call-worker-tsx.ts' : './call-worker.js', import.meta.url),
  );
  return { filename, execArgv: isTs ? ['--require', 'tsx/cjs'] : [] };
}

const SETTLE_BEFORE_TERMINATE_MS = 100;
/** How long threads get to free native resources (ONNX sessions) before they are stopped. */
const RELEASE_TIMEOUT_MS = 2000;
/** A thread declared stalled gets this long to free them (a live one answers at once). */
const STALLED_RELEASE_TIMEOUT_MS = 250;
/**
 * Stopping a thread in the middle of an onnxruntime call aborts the process, so a thread in one
 * is neither declared stalled nor stopped until the call ends, for up to this long (a Silero load
 * takes 0.2 s, seconds under heavy CPU contention; a run, milliseconds). Past it, the thread is
 * declared stalled, and stopped once the call ended or after as long again. A call counts from
 * its start to its end, including the turn of the event loop onnxruntime defers it by: a thread
 * stuck in JS code with a run queued is detected this late, not after heartbeatTimeoutMs.
 */
const ORT_CALL_GRACE_MS = 15_000;
const ORT_POLL_MS = 5;
/** At process exit (which stops the threads), how long to wait for their onnxruntime calls. */
const EXIT_ORT_WAIT_MS = 10_000;
/** One lock word for the whole process: every host's threads load ONNX sessions one at a time. */
const SESSION_LOAD_LOCK = new SharedArrayBuffer(4);

const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms).unref());

export class WorkerHost {
  private readonly pool: Piscina<CallStartTask, CallTaskResult>;
  private readonly calls = new Map<string, CallChannel>();
  private readonly threads = new Map<number, ThreadState>();
  private readonly deadThreads = new Set<number>();
  private readonly terminating = new Set<Promise<void>>();
  private readonly heartbeatTimeoutMs: number;
  private readonly watchdog: NodeJS.Timeout;
  private readonly control: BroadcastChannel;
  private readonly releaseWaiters = new Set<(threadId: number) => void>();
  private closing = false;
  private closed: Promise<void> | undefined;
  /** Threads declared dead (crashed or stalled) so far. */
  workerDeaths = 0;

  constructor(options: WorkerHostOptions = {}) {
    const threads = options.threads ?? availableParallelism();
    const heartbeatIntervalMs = options.heartbeatIntervalMs ?? 250;
    this.heartbeatTimeoutMs = options.heartbeatTimeoutMs ?? 2000;
    const entry = defaultWorkerEntry();
    const controlChannel = `parla-worker-control-${randomUUID()}`;
    this.control = new BroadcastChannel(controlChannel);
    this.control.unref();
    this.control.onmessage = (event) => {
      const message = (event as MessageEvent).data as unknown;
      if (isReleasedNotice(message)) {
        for (const waiter of [...this.releaseWaiters]) {
          waiter(message.threadId);
        }
      }
    };
    this.pool = new Piscina<CallStartTask, CallTaskResult>({
      filename: options.filename ?? entry.filename,
      execArgv: options.execArgv ?? entry.execArgv,
      minThreads: threads,
      maxThreads: threads,
      concurrentTasksPerWorker: options.maxCallsPerThread ?? 1000,
      // Calls are long-lived async tasks: the worker's event loop must keep running.
      atomics: 'disabled',
      // Never retire idle threads: a thread stops only through close() or the watchdog, which
      // first let it free its onnxruntime sessions (Piscina's default idleTimeout is 0).
      idleTimeout: Infinity,
      workerData: { heartbeatIntervalMs, controlChannel, sessionLoadLock: SESSION_LOAD_LOCK },
    });
    this.pool.on('message', (message: unknown) => {
      if (isHeartbeatMessage(message)) {
        this.onHeartbeat(message);
      }
    });
    // Worker errors with no task to fail land here; the calls are handled via their tasks.
    this.pool.on('error', () => {});
    const checkEveryMs = Math.max(10, Math.min(heartbeatIntervalMs, this.heartbeatTimeoutMs / 4));
    this.watchdog = setInterval(() => this.checkHeartbeats(), checkEveryMs);
    this.watchdog.unref();
    process.on('exit', this.onProcessExit);
  }

  get activeCalls(): number {
    return this.calls.size;
  }

  threadStats(): WorkerThreadStats[] {
    const now = performance.now();
    return [...this.threads].map(([threadId, state]) => ({
      threadId,
      lastHeartbeatAgoMs: now - state.lastHeartbeatMs,
      heartbeat: state.heartbeat,
    }));
  }

  startCall(callId: string, handlerName: string, options: CallStartOptions = {}): CallChannel {
    if (this.closing) {
      throw new Error('WorkerHost is closing; no new calls');
    }
    if (this.calls.has(callId)) {
      throw new Error(`call ${callId} is already running`);
    }
    const { port1, port2 } = new MessageChannel();
    const channel = new CallChannel(callId, port1);
    this.calls.set(callId, channel);
    channel.once('ended', () => this.calls.delete(callId));
    const task: CallStartTask = { type: 'start', callId, handlerName, options, port: port2 };
    const run = (): Promise<void> =>
      this.pool.run(task, { transferList: [port2] }).then(
        (result) => channel.finish(result.endedReason),
        // Piscina rejects a task only when its thread exited or crashed, or on destroy.
        () => {
          channel.finish(ENDED_REASON_WORKER_DIED);
          if (channel.threadId !== undefined) {
            this.declareDead(channel.threadId);
          }
        },
      );
    // While a stalled thread is being terminated Piscina may still route tasks to it.
    void (this.terminating.size > 0 ? Promise.all(this.terminating).then(run) : run());
    return channel;
  }

  /**
   * Stop accepting calls, let running calls end on their own for `drainMs`, then end
   * the rest with `worker-shutdown`, and stop the threads.
   */
  close(options: WorkerHostCloseOptions = {}): Promise<void> {
    this.closed ??= this.shutdown(options);
    return this.closed;
  }

  private async shutdown(options: WorkerHostCloseOptions): Promise<void> {
    this.closing = true;
    const drainMs = options.drainMs ?? 0;
    if (drainMs > 0) {
      await Promise.race([this.allEnded(), sleep(drainMs)]);
    }
    for (const channel of this.calls.values()) {
      channel.end(ENDED_REASON_WORKER_SHUTDOWN);
    }
    await Promise.race([this.allEnded(), sleep(options.endTimeoutMs ?? 1000)]);
    for (const channel of [...this.calls.values()]) {
      channel.finish(ENDED_REASON_WORKER_SHUTDOWN);
    }
    clearInterval(this.watchdog);
    // Threads free their ONNX sessions first: terminating a thread that holds one, or is in the
    // middle of an inference, has aborted the whole process.
    await this.releaseThreads([...this.threads.keys()], RELEASE_TIMEOUT_MS);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_BEFORE_TERMINATE_MS));
    await Promise.all([
      ...this.terminating,
      ...[...this.threads.values()].map((state) => claimOrtStopWithin(state.ortActivity)),
    ]);
    await this.pool.destroy();
    this.control.close();
    process.off('exit', this.onProcessExit);
  }

  /** Asks threads to run their shutdown hooks; resolves once each answered or after timeoutMs. */
  private releaseThreads(threadIds: readonly number[], timeoutMs: number): Promise<void> {
    if (threadIds.length === 0) {
      return Promise.resolve();
    }
    const waiting = new Set(threadIds);
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.releaseWaiters.delete(onReleased);
        resolve();
      };
      const onReleased = (threadId: number): void => {
        waiting.delete(threadId);
        if (waiting.size === 0) {
          done();
        }
      };
      // Ref'd: the process must not exit while its threads free their sessions.
      const timer = setTimeout(done, timeoutMs);
      this.releaseWaiters.add(onReleased);
      const threadId = threadIds.length === 1 ? threadIds[0]! : null;
      this.control.postMessage({ type: 'parla-release', threadId });
    });
  }

  private allEnded(): Promise<unknown> {
    return Promise.all([...this.calls.values()].map((channel) => channel.ended));
  }

  private onHeartbeat(message: HeartbeatMessage): void {
    if (this.deadThreads.has(message.threadId)) {
      return;
    }
    const known = this.threads.get(message.threadId);
    if (known !== undefined) {
      known.lastHeartbeatMs = performance.now();
      known.heartbeat = message;
      known.timeoutMs = this.timeoutAfter(message);
      known.ortActivity ??= activityOf(message);
      return;
    }
    this.threads.set(message.threadId, {
      lastHeartbeatMs: performance.now(),
      heartbeat: message,
      timeoutMs: this.timeoutAfter(message),
      ortActivity: activityOf(message),
    });
    const worker = this.findThread(message.threadId);
    worker?.once('exit', () => this.declareDead(message.threadId));
  }

  /** A thread announcing a blocking step (a module load) gets that long for its next heartbeat. */
  private timeoutAfter(message: HeartbeatMessage): number {
    return Math.max(this.heartbeatTimeoutMs, message.busyForMs ?? 0);
  }

  private findThread(threadId: number): Worker | undefined {
    return this.pool.threads.find((worker) => worker.threadId === threadId);
  }

  private checkHeartbeats(): void {
    const now = performance.now();
    for (const [threadId, state] of this.threads) {
      const silentMs = now - state.lastHeartbeatMs;
      if (silentMs > state.timeoutMs) {
        if (
          state.ortActivity !== null &&
          ortBusy(state.ortActivity) &&
          silentMs < ORT_CALL_GRACE_MS
        ) {
          // Blocked in a native onnxruntime call (a session load): progress, not a stall.
          continue;
        }
        const worker = this.findThread(threadId);
        this.declareDead(threadId);
        if (worker !== undefined) {
          // Stalled, not exited: terminate it so Piscina fails its tasks and replaces it. A thread
          // that is only slow frees its ONNX session first; a stuck one is stopped anyway, but
          // never in the middle of an onnxruntime call (see ORT_CALL_GRACE_MS).
          const terminated = this.releaseThreads([threadId], STALLED_RELEASE_TIMEOUT_MS)
            .then(() => claimOrtStopWithin(state.ortActivity))
            .then(() => worker.terminate())
            .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
            .finally(() => this.terminating.delete(terminated));
          this.terminating.add(terminated);
        }
      }
    }
  }

  /**
   * The process exiting without close() (process.exit, an uncaught error) stops every thread right
   * after the 'exit' listeners: wait, synchronously, until none is in an onnxruntime call.
   */
  private readonly onProcessExit = (): void => {
    const deadline = performance.now() + EXIT_ORT_WAIT_MS;
    const pause = new Int32Array(new SharedArrayBuffer(4));
    for (const state of this.threads.values()) {
      const activity = state.ortActivity;
      while (activity !== null && !claimOrtStop(activity) && performance.now() < deadline) {
        Atomics.wait(pause, 0, 0, 1);
      }
    }
  };

  private declareDead(threadId: number): void {
    if (this.deadThreads.has(threadId)) {
      return;
    }
    this.deadThreads.add(threadId);
    this.threads.delete(threadId);
    if (!this.closing) {
      this.workerDeaths += 1;
    }
    for (const channel of [...this.calls.values()]) {
      if (channel.threadId === threadId) {
        channel.finish(ENDED_REASON_WORKER_DIED);
      }
    }
  }
}

function activityOf(message: HeartbeatMessage): Int32Array | null {
  return message.ortActivity instanceof SharedArrayBuffer
    ? new Int32Array(message.ortActivity, 0, 1)
    : null;
}

/**
 * Resolves once the thread owning `activity` has no onnxruntime call in progress and has been
 * marked as stopping (it then refuses new ones), or after ORT_CALL_GRACE_MS.
 */
async function claimOrtStopWithin(activity: Int32Array | null): Promise<void> {
  if (activity === null) {
    return;
  }
  const deadline = performance.now() + ORT_CALL_GRACE_MS;
  while (!claimOrtStop(activity) && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, ORT_POLL_MS));
  }
}
