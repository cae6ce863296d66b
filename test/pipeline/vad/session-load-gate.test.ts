import { afterAll, describe, expect, it } from 'vitest';
import {
  claimOrtStop,
  closeThreadSessions,
  installSessionLoadGate,
  onCloseThreadSessions,
  ORT_THREAD_CLOSED,
  ortBusy,
  ortCallsInProgress,
  withOrtCall,
  withSessionLoadGate,
  withSessionReleaseGate,
} from '../../../src/pipeline/vad/session-load-gate.js';

/**
 * The module's state is per thread (here: this test file's), so the tests run in order and end
 * with the thread closed.
 */
const lock = new SharedArrayBuffer(4);
const activityBuffer = new SharedArrayBuffer(4);
const activity = new Int32Array(activityBuffer);
installSessionLoadGate(lock, activityBuffer);

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

afterAll(() => {
  Atomics.store(activity, 0, 0);
});

describe('session-load-gate', () => {
  it('publishes calls in progress, so the host cannot claim the thread during one', async () => {
    const run = deferred();
    const call = withOrtCall(() => run.promise);
    expect(ortBusy(activity)).toBe(true);
    expect(ortCallsInProgress()).toBe(1);
    expect(claimOrtStop(activity)).toBe(false);
    run.resolve();
    await call;
    expect(ortBusy(activity)).toBe(false);
    expect(ortCallsInProgress()).toBe(0);
  });

  it('counts a call that fails, and lets the error through', async () => {
    await expect(withOrtCall(() => Promise.reject(new Error('bad input')))).rejects.toThrow(
      'bad input',
    );
    expect(ortBusy(activity)).toBe(false);
  });

  it('serialises loads and releases through the shared lock', async () => {
    const order: string[] = [];
    const first = deferred();
    const a = withSessionLoadGate(async () => {
      order.push('a start');
      await first.promise;
      order.push('a end');
    });
    const b = withSessionReleaseGate(async () => {
      order.push('b');
      await Promise.resolve();
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(order).toEqual(['a start']);
    first.resolve();
    await Promise.all([a, b]);
    expect(order).toEqual(['a start', 'a end', 'b']);
  });

  it('on close: waits for loads in progress, frees every session, refuses new loads', async () => {
    const load = deferred();
    const freed: string[] = [];
    onCloseThreadSessions(() => {
      freed.push('early');
      return Promise.resolve();
    });
    const removed = onCloseThreadSessions(() => {
      freed.push('removed');
      return Promise.resolve();
    });
    removed();
    const loading = withSessionLoadGate(async () => {
      await load.promise;
      // A session whose load was in progress registers once it exists.
      onCloseThreadSessions(() =>
        withSessionReleaseGate(() => {
          freed.push('late');
          return Promise.resolve();
        }),
      );
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const closing = closeThreadSessions();
    await expect(withSessionLoadGate(() => Promise.resolve())).rejects.toMatchObject({
      code: ORT_THREAD_CLOSED,
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(freed).toEqual([]);
    load.resolve();
    await loading;
    await closing;
    expect(freed.sort()).toEqual(['early', 'late']);
    expect(closeThreadSessions()).toBe(closing);
  });

  it('refuses any call once the host claimed the thread', async () => {
    expect(claimOrtStop(activity)).toBe(true);
    await expect(withOrtCall(() => Promise.resolve(1))).rejects.toMatchObject({
      code: ORT_THREAD_CLOSED,
    });
    expect(ortBusy(activity)).toBe(false);
    expect(claimOrtStop(activity)).toBe(true);
  });
});
