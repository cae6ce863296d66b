/**
 * Call worker entry (Piscina `filename`). Each Piscina task is one call: the task
 * payload carries the call's MessagePort; the returned promise resolves when the
 * call ends. Many calls share a thread and one MediaClock. The thread heartbeats
 * to the host over parentPort every `workerData.heartbeatIntervalMs`.
 */
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import {
  BroadcastChannel,
  parentPort,
  threadId,
  workerData,
  type MessagePort,
} from 'node:worker_threads';
import { closeThreadSessions, installSessionLoadGate } from '../pipeline/vad/session-load-gate.js';
import { MediaClock } from './media-clock.js';
import {
  ENDED_REASON_HANDLER_ERROR,
  ENDED_REASON_HANDLER_NOT_FOUND,
  FRAME_MS,
  isReleaseRequest,
  type CallHandler,
  type CallHandlerFactory,
  type CallStartTask,
  type CallTaskResult,
  type HeartbeatMessage,
  type HostToWorkerMessage,
  type RegisterCallHandlers,
  type WorkerToHostMessage,
} from './protocol.js';

const DEFAULT_SAMPLE_RATE_HZ = 16_000;
const threadData = (workerData ?? {}) as {
  heartbeatIntervalMs?: unknown;
  controlChannel?: unknown;
  sessionLoadLock?: unknown;
};
const HEARTBEAT_INTERVAL_MS = Number(threadData.heartbeatIntervalMs) || 250;

/** How long a handler module may take to load before the host declares the thread stalled. */
const MODULE_LOAD_GRACE_MS = 60_000;

const clock = new MediaClock();
clock.onHookError = (error) => {
  parentPort?.postMessage({ type: 'parla-worker-hook-error', message: describe(error).message });
};
const factories = new Map<string, CallHandlerFactory>();
const threadStats = new Map<string, () => unknown>();
let lastUtilization: EventLoopUtilization = performance.eventLoopUtilization();
const loadedModules = new Map<string, Promise<void>>();
let activeCalls = 0;
/** performance.now() until which the thread announced it may block (module loads in progress). */
let busyUntilMs = 0;
let modulesLoading = 0;
/** This thread's onnxruntime calls in progress, read by the host (see session-load-gate.ts). */
const ortActivity = new SharedArrayBuffer(4);

/** Register a handler factory in this thread (for handlers bundled with the worker). */
export function registerCallHandler(name: string, factory: CallHandlerFactory): void {
  factories.set(name, factory);
}

function loadHandlerModule(specifier: string): Promise<void> {
  let loading = loadedModules.get(specifier);
  if (loading === undefined) {
    const url = specifier.startsWith('file:') ? specifier : pathToFileURL(specifier).href;
    modulesLoading += 1;
    sendHeartbeat(MODULE_LOAD_GRACE_MS);
    loading = import(url)
      .then((mod: { registerCallHandlers?: RegisterCallHandlers }) => {
        if (typeof mod.registerCallHandlers !== 'function') {
          throw new Error(`${specifier} does not export registerCallHandlers`);
        }
        mod.registerCallHandlers(registerCallHandler);
      })
      .finally(() => {
        modulesLoading -= 1;
        if (modulesLoading === 0) {
          busyUntilMs = 0;
        }
      });
    loadedModules.set(specifier, loading);
  }
  return loading;
}

function readThreadStats(): Record<string, unknown> {
  const stats: Record<string, unknown> = {};
  for (const [name, read] of threadStats) {
    try {
      stats[name] = read();
    } catch (error) {
      stats[name] = { error: describe(error).message };
    }
  }
  return stats;
}

/**
 * `busyForMs`: the thread is about to block for up to that long. Later heartbeats repeat what is
 * left of it until the loads end, so a periodic heartbeat during a load does not cut it short.
 */
function sendHeartbeat(busyForMs?: number): void {
  const nowMs = performance.now();
  if (busyForMs !== undefined) {
    busyUntilMs = Math.max(busyUntilMs, nowMs + busyForMs);
  }
  const busyLeftMs = Math.ceil(busyUntilMs - nowMs);
  const now = performance.eventLoopUtilization();
  const utilization = performance.eventLoopUtilization(now, lastUtilization);
  lastUtilization = now;
  const message: HeartbeatMessage = {
    type: 'parla-worker-heartbeat',
    threadId,
    calls: activeCalls,
    clock: clock.stats(),
    eventLoopUtilization: utilization.utilization,
    stats: readThreadStats(),
    ortActivity,
    ...(busyLeftMs > 0 ? { busyForMs: busyLeftMs } : {}),
  };
  parentPort?.postMessage(message);
}

/**
 * A promise a handler forgot to await must not take the thread (and every call on it) down:
 * rejections nobody handled are counted and reported in the heartbeat instead of crashing.
 */
const unhandled = { count: 0, lastMessage: '' };
threadStats.set('unhandledRejections', () => ({ ...unhandled }));
process.on('unhandledRejection', (reason) => {
  unhandled.count += 1;
  unhandled.lastMessage = describe(reason).message;
});

if (threadData.sessionLoadLock instanceof SharedArrayBuffer) {
  installSessionLoadGate(threadData.sessionLoadLock, ortActivity);
}

/** Native resources to free before the thread stops (see CallHandlerContext.addShutdownHook). */
const shutdownHooks = new Set<() => Promise<void> | void>();
let released: Promise<void> | undefined;

/** Runs the shutdown hooks, then frees every onnxruntime session left (even of no call). */
function releaseThread(): Promise<void> {
  released ??= (async () => {
    const hooks: (() => Promise<void> | void)[] = [...shutdownHooks, closeThreadSessions];
    for (const hook of hooks) {
      try {
        await hook();
      } catch (error) {
        parentPort?.postMessage({
          type: 'parla-worker-hook-error',
          message: describe(error).message,
        });
      }
    }
  })();
  return released;
}

if (typeof threadData.controlChannel === 'string') {
  const control = new BroadcastChannel(threadData.controlChannel);
  control.unref();
  control.onmessage = (event) => {
    const message = (event as MessageEvent).data as unknown;
    if (isReleaseRequest(message) && (message.threadId ?? threadId) === threadId) {
      void releaseThread().then(() => control.postMessage({ type: 'parla-released', threadId }));
    }
  };
}

if (parentPort !== null) {
  sendHeartbeat();
  setInterval(() => sendHeartbeat(), HEARTBEAT_INTERVAL_MS).unref();
}

function describe(error: unknown): { message: string; stack?: string } {
  if (error instanceof Error) {
    return error.stack === undefined
      ? { message: error.message }
      : { message: error.message, stack: error.stack };
  }
  return { message: String(error) };
}

class WorkerCall {
  private handler: CallHandler | undefined;
  private ended = false;
  private resolveEnded!: (result: CallTaskResult) => void;
  readonly done = new Promise<CallTaskResult>((resolve) => {
    this.resolveEnded = resolve;
  });
  private readonly frameSamples: number;
  /** The next outgoing frame; kept across silent ticks, replaced once transferred. */
  private out: Int16Array<ArrayBuffer>;
  private readonly participant = { tick: (nowMs: number): void => this.tick(nowMs) };

  constructor(
    private readonly task: CallStartTask,
    private readonly port: MessagePort,
  ) {
    const sampleRateHz = task.options.sampleRateHz ?? DEFAULT_SAMPLE_RATE_HZ;
    // Rounded up: at rates where 20 ms is not whole samples (11025, 8001 Hz …) a tick may carry one
    // more sample than at others, and a shorter frame is sent as it is.
    this.frameSamples = Math.ceil((sampleRateHz * FRAME_MS) / 1000);
    this.out = new Int16Array(this.frameSamples);
  }

  start(factory: CallHandlerFactory): void {
    activeCalls += 1;
    this.port.on('message', (message: HostToWorkerMessage) => this.onMessage(message));
    this.post({ type: 'started', callId: this.task.callId, threadId });
    this.guard(() => {
      this.handler = factory({
        callId: this.task.callId,
        sampleRateHz: this.task.options.sampleRateHz ?? DEFAULT_SAMPLE_RATE_HZ,
        frameSamples: this.frameSamples,
        params: this.task.options.params,
        emit: (name, data) => this.post({ type: 'event', name, data }),
        end: (reason) => this.end(reason),
        addTickHook: (hook) => clock.addHook(hook),
        setThreadStats: (name, read) => threadStats.set(name, read),
        addShutdownHook: (hook) => shutdownHooks.add(hook),
        tickNow: () => {
          if (!this.ended && this.handler !== undefined) {
            this.tick(performance.now());
          }
        },
      });
      this.handler.onStart(performance.now());
    });
    if (!this.ended) {
      clock.add(this.participant);
    }
  }

  fail(reason: string, error: unknown): void {
    this.post({ type: 'error', ...describe(error) });
    this.end(reason, false);
  }

  private post(message: WorkerToHostMessage, transfer: ArrayBuffer[] = []): void {
    this.port.postMessage(message, transfer);
  }

  private guard(run: () => void): void {
    if (this.ended) {
      return;
    }
    try {
      run();
    } catch (error) {
      this.fail(ENDED_REASON_HANDLER_ERROR, error);
    }
  }

  private onMessage(message: HostToWorkerMessage): void {
    switch (message.type) {
      case 'audio':
        this.guard(() => this.handler?.onAudio(new Int16Array(message.buffer), performance.now()));
        break;
      case 'control':
        this.guard(() => this.handler?.onControl(message.message));
        break;
      case 'end':
        this.end(message.reason);
        break;
    }
  }

  private tick(nowMs: number): void {
    this.guard(() => {
      if (this.handler === undefined) {
        return;
      }
      const out = this.out;
      const written = this.handler.onTick(nowMs, out);
      if (written > 0 && !this.ended) {
        let frame: Int16Array<ArrayBuffer> = out;
        if (written >= out.length) {
          this.out = new Int16Array(this.frameSamples);
        } else {
          frame = out.slice(0, written);
        }
        this.post({ type: 'audio', buffer: frame.buffer, nowMs }, [frame.buffer]);
      }
    });
  }

  end(reason: string, notifyHandler = true): void {
    if (this.ended) {
      return;
    }
    this.ended = true;
    clock.remove(this.participant);
    if (notifyHandler && this.handler !== undefined) {
      try {
        this.handler.onEnd(reason);
      } catch (error) {
        this.post({ type: 'error', ...describe(error) });
      }
    }
    activeCalls -= 1;
    this.post({ type: 'ended', endedReason: reason });
    this.port.close();
    this.resolveEnded({ endedReason: reason });
  }
}

/** Call starts run for at most this long in one turn of the event loop (see queueStart). */
const START_BUDGET_MS = 10;
const startQueue: (() => void)[] = [];
let drainingStarts = false;

/**
 * Many calls starting at once (each builds its pipeline) must not hold the thread past its
 * heartbeat or delay the media clock by much: starts run from a queue, START_BUDGET_MS at a time,
 * with a turn of the event loop (timers, audio, heartbeats) between batches.
 */
function queueStart(start: () => void): void {
  startQueue.push(start);
  if (!drainingStarts) {
    drainingStarts = true;
    setImmediate(drainStarts);
  }
}

function drainStarts(): void {
  const untilMs = performance.now() + START_BUDGET_MS;
  while (startQueue.length > 0 && performance.now() < untilMs) {
    startQueue.shift()!();
  }
  if (startQueue.length > 0) {
    setImmediate(drainStarts);
  } else {
    drainingStarts = false;
  }
}

/** Piscina task: run one call until it ends. */
export default async function runCall(task: CallStartTask): Promise<CallTaskResult> {
  const call = new WorkerCall(task, task.port);
  let factory: CallHandlerFactory | undefined;
  try {
    if (task.options.handlerModule !== undefined) {
      await loadHandlerModule(task.options.handlerModule);
    }
    factory = factories.get(task.handlerName);
    if (factory === undefined) {
      throw new Error(`no call handler registered as "${task.handlerName}"`);
    }
  } catch (error) {
    activeCalls += 1;
    call.fail(ENDED_REASON_HANDLER_NOT_FOUND, error);
    return call.done;
  }
  const ready = factory;
  queueStart(() => call.start(ready));
  return call.done;
}
