/**
 * A handler module that, as src/calls/call-handlers.ts does, starts onnxruntime work when it is
 * loaded, outside any call and without a shutdown hook: it loads a Silero session and scores
 * windows back to back until the session is released. Each thread announces its first run on
 * the BroadcastChannel SILERO_SPIN_CHANNEL. Also registers `silero-long-run`: a tone call that
 * first scores one very large batch (seconds of native code, during which the thread sends no
 * heartbeat) and emits `long-run-done`. Stopping a thread mid-run has aborted the process; see
 * ort-thread-stop.test.ts.
 */
import { BroadcastChannel, threadId } from 'node:worker_threads';
import { SileroModel, sileroInputSamples } from '../../../src/pipeline/vad/silero-model.js';
import type { CallHandlerContext, RegisterCallHandlers } from '../../../src/workers/protocol.js';
import { SILERO_SPIN_CHANNEL } from './silero-spin-channel.js';
import { registerCallHandlers as registerTestHandlers } from './test-handlers.js';

const SPIN_BATCH = 8;
/** About a second of inference on an idle core, several under load. */
const LONG_BATCH = 16_384;

const loading = SileroModel.create();

async function score(model: SileroModel, batch: number): Promise<void> {
  const inputs = new Float32Array(batch * sileroInputSamples(16000)).map(
    (_, i) => Math.sin(i / 7) * 0.3,
  );
  await model.runBatch(
    16000,
    inputs,
    new Float32Array(batch * 256),
    batch,
    new Float32Array(batch),
  );
}

async function spin(): Promise<void> {
  const model = await loading;
  const announce = new BroadcastChannel(SILERO_SPIN_CHANNEL);
  announce.unref();
  try {
    await score(model, SPIN_BATCH);
    announce.postMessage({ threadId });
    for (;;) {
      await score(model, SPIN_BATCH);
    }
  } catch {
    // released: the thread is shutting down
  } finally {
    announce.close();
  }
}

void spin();

export const registerCallHandlers: RegisterCallHandlers = (register) => {
  registerTestHandlers((name, factory) => {
    register(name, factory);
    if (name === 'tone') {
      register('silero-long-run', (context: CallHandlerContext) => {
        void loading
          .then((model) => score(model, LONG_BATCH))
          .then(
            () => context.emit('long-run-done', { failed: false }),
            () => context.emit('long-run-done', { failed: true }),
          );
        return factory(context);
      });
    }
  });
};
