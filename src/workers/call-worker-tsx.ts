/**
 * Development entry for the call worker when the host runs from TypeScript sources
 * (vitest, tsx). Node 20 does not carry tsx's `--import` hooks into worker threads, so
 * the pool starts threads with `--require tsx/cjs` (Piscina then loads this file
 * through tsx's require hook), and this file registers tsx's ESM hooks in the thread
 * before importing the real entry and the `.ts` handler modules. Production runs
 * dist/src/workers/call-worker.js directly and never loads this file.
 */
import type { CallStartTask, CallTaskResult } from './protocol.js';

const entry = import('tsx/esm/api').then(({ register }) => {
  register();
  return import('./call-worker.js');
});

export default async function runCall(task: CallStartTask): Promise<CallTaskResult> {
  const { default: run } = await entry;
  return run(task);
}
