/**
 * Child process of ort-thread-stop.test.ts (run with `node --import tsx`); exits 0 unless
 * onnxruntime aborted the process.
 * - `close-mid-run <cycles>`: `cycles` times, starts a WorkerHost whose threads load
 *   silero-spin-handlers.ts (Silero runs back to back, no shutdown hook), waits until every
 *   thread runs Silero, then closes the host (which stops the threads). Prints `stopped <cycles>`.
 * - `exit-mid-run`: the same once, but the process exits while the threads run Silero, without
 *   closing the host. Prints `exiting`.
 * - `long-run`: a host with a 300 ms heartbeat timeout runs `silero-long-run` (one native run of
 *   seconds); prints `long-run <failed> deaths <n>` once the run ended, then closes the host.
 */
import { fileURLToPath } from 'node:url';
import { BroadcastChannel } from 'node:worker_threads';
import { WorkerHost } from '../../../src/workers/host.js';
import { SILERO_SPIN_CHANNEL } from './silero-spin-channel.js';

const handlerModule = fileURLToPath(new URL('./silero-spin-handlers.ts', import.meta.url));
const THREADS = 2;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function closeMidRun(cycles: number, exit = false): Promise<void> {
  const running = new Set<number>();
  const channel = new BroadcastChannel(SILERO_SPIN_CHANNEL);
  channel.onmessage = (event) => {
    running.add(((event as MessageEvent).data as { threadId: number }).threadId);
  };
  for (let cycle = 0; cycle < cycles; cycle++) {
    running.clear();
    const host = new WorkerHost({ threads: THREADS });
    for (let i = 0; i < THREADS * 2; i++) {
      host.startCall(`spin-${cycle}-${i}`, 'tone', { handlerModule, sampleRateHz: 16000 });
    }
    const deadline = Date.now() + 60_000;
    while (running.size < THREADS && Date.now() < deadline) {
      await sleep(10);
    }
    if (running.size < THREADS) {
      throw new Error(`only ${running.size} of ${THREADS} threads ran Silero`);
    }
    if (exit) {
      console.log('exiting');
      process.exit(0);
    }
    await host.close();
  }
  channel.close();
  console.log(`stopped ${cycles}`);
}

async function longRun(): Promise<void> {
  const host = new WorkerHost({ threads: 1, heartbeatIntervalMs: 50, heartbeatTimeoutMs: 300 });
  const call = host.startCall('long-run', 'silero-long-run', {
    handlerModule,
    sampleRateHz: 16000,
  });
  const done = await Promise.race([
    new Promise<{ failed: boolean }>((resolve) =>
      call.on('event', (name, data) => {
        if (name === 'long-run-done') {
          resolve(data as { failed: boolean });
        }
      }),
    ),
    call.ended.then((reason) => ({ failed: true, reason })),
  ]);
  console.log(`long-run ${String(done.failed)} deaths ${host.workerDeaths}`);
  await host.close();
}

const [mode, cycles] = process.argv.slice(2);
await (mode === 'long-run' ? longRun() : closeMidRun(Number(cycles ?? 3), mode === 'exit-mid-run'));
