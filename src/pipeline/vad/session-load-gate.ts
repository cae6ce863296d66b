/**
 * This thread's onnxruntime calls, as the owner of the threads needs to see them.
 *
 * onnxruntime-node aborts the whole process (`terminate called after throwing an instance of
 * 'Napi::Error'`) when a thread is stopped (`worker.terminate()`, or the process exiting) while a
 * session load or run is in progress on it: the native call returns into a JS environment that is
 * being torn down. A thread holding idle sessions can be stopped safely. See docs/pipeline.md.
 *
 * So every call that may run native code (load, run, release) goes through `withOrtCall`, which
 * counts it in an activity word the host can read without the thread's help (a thread busy in a
 * native load cannot answer messages). The host stops a thread only after claiming that word at
 * zero (`claimOrtStop`), after which this thread refuses new calls. Loads and releases are also
 * serialised across the process by a shared lock word (the native Env is process-wide).
 * `closeThreadSessions` (before a thread stops) refuses new loads, waits for the calls in
 * progress and frees every session registered with `onCloseThreadSessions`.
 *
 * Without installed words (main thread, tests) loads run as they come. This module does not load
 * onnxruntime.
 */

let lockWord: Int32Array | null = null;
let activityWord: Int32Array | null = null;

const UNLOCKED = 0;
const LOCKED = 1;
/** A thread holding the lock this long (it died mid-load) no longer blocks the others. */
const MAX_WAIT_MS = 30_000;
/** Set in an activity word by the host that is stopping the thread (the low bits count calls). */
const STOPPING = 1 << 30;

/** Stable code of the error refusing onnxruntime work on a thread that is shutting down. */
export const ORT_THREAD_CLOSED = 'ort-thread-closed';

export class OrtThreadClosedError extends Error {
  readonly code = ORT_THREAD_CLOSED;
  constructor() {
    super('this thread is shutting down: no new onnxruntime work');
    this.name = 'OrtThreadClosedError';
  }
}

let closed = false;
let closing: Promise<void> | undefined;
const inFlight = new Set<Promise<unknown>>();
const closers = new Set<() => Promise<void>>();

/**
 * Uses `lock` (one Int32, the same for every thread of the process) to serialise loads, and
 * `activity` (one Int32 of this thread's own, shared with the host) to publish calls in progress.
 */
export function installSessionLoadGate(
  lock: SharedArrayBuffer,
  activity?: SharedArrayBuffer,
): void {
  lockWord = new Int32Array(lock, 0, 1);
  activityWord = activity === undefined ? null : new Int32Array(activity, 0, 1);
}

/** Runs `load` (creating a session) while no other thread of the process loads or releases one. */
export async function withSessionLoadGate<T>(load: () => Promise<T>): Promise<T> {
  if (closed) {
    throw new OrtThreadClosedError();
  }
  return withLock(() => {
    if (closed) {
      throw new OrtThreadClosedError();
    }
    return withOrtCall(load);
  });
}

/** Runs `release` (freeing a session) under the same lock; allowed while the thread closes. */
export function withSessionReleaseGate<T>(release: () => Promise<T>): Promise<T> {
  return withLock(() => withOrtCall(release));
}

/**
 * Counts `call` (one that may run native onnxruntime code, including work it queues) as in
 * progress on this thread until its promise settles. Throws if the host is stopping the thread.
 */
export async function withOrtCall<T>(call: () => Promise<T>): Promise<T> {
  const word = activityWord;
  if (word !== null && (Atomics.add(word, 0, 1) & STOPPING) !== 0) {
    Atomics.sub(word, 0, 1);
    throw new OrtThreadClosedError();
  }
  let running: Promise<T> | undefined;
  try {
    running = call();
    inFlight.add(running);
    return await running;
  } finally {
    if (running !== undefined) {
      inFlight.delete(running);
    }
    if (word !== null) {
      Atomics.sub(word, 0, 1);
    }
  }
}

/** onnxruntime calls in progress on this thread. */
export function ortCallsInProgress(): number {
  return inFlight.size;
}

/** Registers `close` (freeing a session) to run in closeThreadSessions; returns its removal. */
export function onCloseThreadSessions(close: () => Promise<void>): () => void {
  closers.add(close);
  return () => {
    closers.delete(close);
  };
}

/**
 * Before the thread stops: refuses new loads, waits for the calls in progress and frees the
 * registered sessions (also those whose load was in progress). Idempotent.
 */
export function closeThreadSessions(): Promise<void> {
  closing ??= (async () => {
    closed = true;
    for (;;) {
      await Promise.allSettled([...inFlight]);
      // Let the continuations of finished loads register their sessions.
      await new Promise((resolve) => setImmediate(resolve));
      const pending = [...closers];
      closers.clear();
      if (pending.length === 0 && inFlight.size === 0) {
        return;
      }
      await Promise.allSettled(pending.map((close) => close()));
    }
  })();
  return closing;
}

/**
 * For the host, from another thread: marks the thread's activity word as stopping if no
 * onnxruntime call is in progress there (true: it may be terminated now; it will refuse new
 * calls). False: a call is in progress; try again later.
 */
export function claimOrtStop(activity: Int32Array): boolean {
  const seen = Atomics.compareExchange(activity, 0, 0, STOPPING);
  return seen === 0 || seen === STOPPING;
}

/** For the host: whether the thread owning `activity` has an onnxruntime call in progress. */
export function ortBusy(activity: Int32Array): boolean {
  return (Atomics.load(activity, 0) & ~STOPPING) !== 0;
}

async function withLock<T>(run: () => Promise<T>): Promise<T> {
  const word = lockWord;
  if (word === null) {
    return run();
  }
  const deadline = performance.now() + MAX_WAIT_MS;
  while (Atomics.compareExchange(word, 0, UNLOCKED, LOCKED) !== UNLOCKED) {
    if (performance.now() >= deadline) {
      break;
    }
    const wait = Atomics.waitAsync(word, 0, LOCKED, 50);
    if (wait.async) {
      await wait.value;
    }
  }
  try {
    return await run();
  } finally {
    Atomics.store(word, 0, UNLOCKED);
    Atomics.notify(word, 0);
  }
}
