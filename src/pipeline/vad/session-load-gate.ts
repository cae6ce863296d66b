/**
 * Serialises ONNX session creation across the worker threads of a process. onnxruntime-node keeps
 * process-wide native state (its Env, created by the first session of any thread, with cleanup
 * hooks per thread); two threads creating their first sessions at once, or one creating while
 * another tears down, has aborted the process (`terminate called after throwing an instance of
 * 'Napi::Error'`). The owner of the threads installs a gate over a shared lock word; without one,
 * loads run as they come. This module does not load onnxruntime.
 */

let lockWord: Int32Array | null = null;

const UNLOCKED = 0;
const LOCKED = 1;
/** A thread holding the lock this long (it died mid-load) no longer blocks the others. */
const MAX_WAIT_MS = 30_000;

/** Uses `shared` (one Int32 in a SharedArrayBuffer, the same for every thread) as the lock. */
export function installSessionLoadGate(shared: SharedArrayBuffer): void {
  lockWord = new Int32Array(shared, 0, 1);
}

/** Runs `load` while no other thread of the process loads a session. */
export async function withSessionLoadGate<T>(load: () => Promise<T>): Promise<T> {
  const word = lockWord;
  if (word === null) {
    return load();
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
    return await load();
  } finally {
    Atomics.store(word, 0, UNLOCKED);
    Atomics.notify(word, 0);
  }
}
