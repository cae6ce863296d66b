import { fileURLToPath } from 'node:url';
import { BroadcastChannel } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { WorkerHost, type WorkerHostOptions } from '../../src/workers/host.js';
import {
  ENDED_REASON_HANDLER_ERROR,
  ENDED_REASON_HANDLER_NOT_FOUND,
  ENDED_REASON_WORKER_DIED,
  ENDED_REASON_WORKER_SHUTDOWN,
} from '../../src/workers/protocol.js';

const handlerModule = fileURLToPath(new URL('./support/test-handlers.ts', import.meta.url));
const SAMPLE_RATE_HZ = 16_000;
const FRAME_SAMPLES = 320;

let hosts: WorkerHost[] = [];

function makeHost(options: WorkerHostOptions = {}): WorkerHost {
  const host = new WorkerHost({ threads: 1, ...options });
  hosts.push(host);
  return host;
}

afterEach(async () => {
  await Promise.all(hosts.map((host) => host.close()));
  hosts = [];
});

async function waitFor(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
  const startedAt = Date.now();
  while (!predicate()) {
    if (Date.now() - startedAt > timeoutMs) {
      throw new Error('timed out waiting');
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function start(host: WorkerHost, callId: string, handler: string, params: unknown = {}) {
  const channel = host.startCall(callId, handler, {
    handlerModule,
    sampleRateHz: SAMPLE_RATE_HZ,
    params,
  });
  const frames: Int16Array[] = [];
  const times: number[] = [];
  channel.on('audio', (samples, nowMs) => {
    frames.push(samples);
    times.push(nowMs);
  });
  return { channel, frames, times };
}

describe('WorkerHost', () => {
  it('streams a tone in 20 ms frames and transfers audio without copying', async () => {
    const host = makeHost();
    const { channel, frames, times } = start(host, 'tone-1', 'tone');
    await waitFor(() => frames.length >= 25);
    expect(frames.every((frame) => frame.length === FRAME_SAMPLES)).toBe(true);
    expect(frames[0]?.some((sample) => sample !== 0)).toBe(true);
    const gaps = times.slice(1).map((t, i) => t - (times[i] ?? t));
    const meanGapMs = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    expect(meanGapMs).toBeGreaterThan(17);
    expect(meanGapMs).toBeLessThan(23);
    expect(channel.threadId).toBeTypeOf('number');

    const echo = start(host, 'echo-1', 'echo');
    const sent = new Int16Array(FRAME_SAMPLES).fill(1234);
    const inCounts: unknown[] = [];
    echo.channel.on('event', (name, data) => inCounts.push([name, data]));
    echo.channel.sendAudio(sent);
    expect(sent.buffer.byteLength).toBe(0); // detached: transferred, not copied
    await waitFor(() => echo.frames.length >= 1);
    expect(echo.frames[0]?.[0]).toBe(1234);
    expect(inCounts).toEqual([['audio-in', FRAME_SAMPLES]]);

    channel.end('customer-ended-call');
    echo.channel.end('customer-ended-call');
    expect(await channel.ended).toBe('customer-ended-call');
    expect(await echo.channel.ended).toBe('customer-ended-call');
    expect(host.activeCalls).toBe(0);
  });

  it('runs 50 concurrent calls on 2 threads, all get frames and end cleanly', async () => {
    const host = makeHost({ threads: 2 });
    const calls = Array.from({ length: 50 }, (_, i) => start(host, `call-${i}`, 'tone'));
    await waitFor(() => calls.every((call) => call.frames.length >= 10), 10_000);
    const threadIds = new Set(calls.map((call) => call.channel.threadId));
    expect(threadIds.size).toBe(2);
    for (const call of calls) {
      call.channel.end('customer-ended-call');
    }
    const reasons = await Promise.all(calls.map((call) => call.channel.ended));
    expect(new Set(reasons)).toEqual(new Set(['customer-ended-call']));
    expect(host.activeCalls).toBe(0);
    await waitFor(() => host.threadStats().every((t) => t.heartbeat?.calls === 0));
    const clocks = host.threadStats().map((t) => t.heartbeat?.clock);
    console.log('media clock stats, 50 calls on 2 threads:', JSON.stringify(clocks));
  });

  it('runs a thread-wide tick hook once per tick after every call, and reports thread stats', async () => {
    const host = makeHost({ heartbeatIntervalMs: 50 });
    const calls = [start(host, 'hook-1', 'tick-hook'), start(host, 'hook-2', 'tick-hook')];
    const figures = (): { hookRuns: number; ticksBeforeHook: number } | undefined =>
      host.threadStats()[0]?.heartbeat?.stats['tick-hook'] as
        { hookRuns: number; ticksBeforeHook: number } | undefined;
    await waitFor(() => (figures()?.hookRuns ?? 0) >= 10);
    const beat = host.threadStats()[0]?.heartbeat;
    // One hook run per clock tick (not per call), each after both calls ticked.
    expect(figures()?.hookRuns).toBeLessThanOrEqual(beat?.clock.ticks ?? 0);
    expect(figures()?.hookRuns).toBeGreaterThanOrEqual((beat?.clock.ticks ?? 0) - 2);
    expect(figures()?.ticksBeforeHook).toBe(2);
    expect(beat?.eventLoopUtilization).toBeGreaterThanOrEqual(0);
    expect(beat?.eventLoopUtilization).toBeLessThanOrEqual(1);
    for (const call of calls) {
      call.channel.end('customer-ended-call');
      expect(await call.channel.ended).toBe('customer-ended-call');
    }
  });

  it('ends only the call whose handler throws', async () => {
    const host = makeHost();
    const good = start(host, 'good', 'tone');
    const bad = start(host, 'bad', 'throw-on-tick', { afterMs: 60 });
    const errors: string[] = [];
    bad.channel.on('handler-error', (message) => errors.push(message));
    expect(await bad.channel.ended).toBe(ENDED_REASON_HANDLER_ERROR);
    expect(errors).toEqual(['handler blew up']);
    const before = good.frames.length;
    await waitFor(() => good.frames.length >= before + 5);
    expect(good.channel.isEnded).toBe(false);
    good.channel.end('customer-ended-call');
    expect(await good.channel.ended).toBe('customer-ended-call');
  });

  it('ends a call with an unknown handler', async () => {
    const host = makeHost();
    const { channel } = start(host, 'nope', 'no-such-handler');
    expect(await channel.ended).toBe(ENDED_REASON_HANDLER_NOT_FOUND);
  });

  it.each(['exit-thread', 'uncaught-error'])(
    'a worker that crashes (%s) ends its calls with worker-died; the next call works',
    async (handler) => {
      const host = makeHost();
      const bystander = start(host, 'bystander', 'tone');
      await waitFor(() => bystander.frames.length >= 1);
      const crasher = start(host, 'crasher', handler, { afterMs: 60 });
      expect(await crasher.channel.ended).toBe(ENDED_REASON_WORKER_DIED);
      expect(await bystander.channel.ended).toBe(ENDED_REASON_WORKER_DIED);
      expect(host.workerDeaths).toBe(1);

      const next = start(host, 'next', 'tone');
      await waitFor(() => next.frames.length >= 3, 10_000);
      expect(next.channel.threadId).not.toBe(crasher.channel.threadId);
      next.channel.end('customer-ended-call');
      expect(await next.channel.ended).toBe('customer-ended-call');
    },
  );

  it('detects a stalled worker by heartbeat, ends its calls and replaces it', async () => {
    const host = makeHost({ heartbeatIntervalMs: 50, heartbeatTimeoutMs: 300 });
    const bystander = start(host, 'bystander', 'tone');
    await waitFor(() => bystander.frames.length >= 1);
    const staller = start(host, 'staller', 'stall', { afterMs: 40, stallMs: 5000 });
    const startedMs = Date.now();
    expect(await staller.channel.ended).toBe(ENDED_REASON_WORKER_DIED);
    expect(await bystander.channel.ended).toBe(ENDED_REASON_WORKER_DIED);
    const detectedAfterMs = Date.now() - startedMs;
    console.log(`stall detected after ${detectedAfterMs} ms (timeout 300 ms)`);
    expect(detectedAfterMs).toBeLessThan(2000);

    const next = start(host, 'next', 'tone');
    await waitFor(() => next.frames.length >= 3, 10_000);
    next.channel.end('customer-ended-call');
    expect(await next.channel.ended).toBe('customer-ended-call');
  });

  it('gives a thread loading a handler module more time than the heartbeat timeout', async () => {
    const host = makeHost({ heartbeatIntervalMs: 50, heartbeatTimeoutMs: 300 });
    const slowModule = fileURLToPath(new URL('./support/slow-load-handlers.ts', import.meta.url));
    const channel = host.startCall('slow-load', 'tone', {
      handlerModule: slowModule,
      sampleRateHz: SAMPLE_RATE_HZ,
    });
    const frames: Int16Array[] = [];
    channel.on('audio', (samples) => frames.push(samples));
    await waitFor(() => frames.length >= 3);
    expect(host.workerDeaths).toBe(0);
    channel.end('customer-ended-call');
    expect(await channel.ended).toBe('customer-ended-call');
  });

  it('runs shutdown hooks (freeing native sessions) in every thread before stopping it', async () => {
    const host = makeHost({ threads: 2 });
    const name = `release-probe-${process.pid}-${Date.now()}`;
    const probe = new BroadcastChannel(name);
    const released: string[] = [];
    probe.onmessage = (event) =>
      released.push(((event as MessageEvent).data as { released: string }).released);
    const a = start(host, 'probe-a', 'release-probe', { channel: name });
    const b = start(host, 'probe-b', 'release-probe', { channel: name });
    await waitFor(() => a.frames.length >= 1 && b.frames.length >= 1);
    await host.close();
    // Each call registered a hook in its thread; a thread runs each hook function once.
    expect(released.length).toBeGreaterThanOrEqual(1);
    expect(released.every((id) => id === 'probe-a' || id === 'probe-b')).toBe(true);
    probe.close();
  });

  it('starts 100 costly calls at once without missing a heartbeat', async () => {
    const host = makeHost({ heartbeatIntervalMs: 50, heartbeatTimeoutMs: 300 });
    // 100 × 40 ms of construction: 4 s of work, far past the 300 ms heartbeat timeout if
    // it ran in one go.
    const calls = Array.from({ length: 100 }, (_, i) =>
      start(host, `burst-${i}`, 'slow-start', { buildMs: 40 }),
    );
    await waitFor(() => calls.every((call) => call.frames.length >= 1), 15_000);
    expect(host.workerDeaths).toBe(0);
    for (const call of calls) {
      call.channel.end('customer-ended-call');
    }
  });

  it('shutdown drains, then ends remaining calls with worker-shutdown', async () => {
    const host = makeHost();
    const short = start(host, 'short', 'tone', { durationMs: 100 });
    const long1 = start(host, 'long-1', 'tone');
    const long2 = start(host, 'long-2', 'tone');
    await waitFor(() => long1.frames.length >= 1 && long2.frames.length >= 1);
    const closing = host.close({ drainMs: 400 });
    expect(() => host.startCall('late', 'tone', { handlerModule })).toThrow(/closing/);
    await closing;
    expect(await short.channel.ended).toBe('completed');
    expect(await long1.channel.ended).toBe(ENDED_REASON_WORKER_SHUTDOWN);
    expect(await long2.channel.ended).toBe(ENDED_REASON_WORKER_SHUTDOWN);
    expect(host.activeCalls).toBe(0);
  });
});
