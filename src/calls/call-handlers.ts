/**
 * The call worker's handler module (the `handlerModule` start option): loaded once per worker
 * thread, it registers the voice pipeline as PIPELINE_CALL_HANDLER and starts loading the
 * thread's Silero model at once, so that the first call does not wait for it (a call whose
 * windows arrive before the model is ready keeps them for about half a second).
 */
import { SileroScheduler } from '../pipeline/vad/silero-scheduler.js';
import type { RegisterCallHandlers } from '../workers/protocol.js';
import { createPipelineCallHandler } from './pipeline-call-handler.js';
import { PIPELINE_CALL_HANDLER } from './pipeline-call-params.js';

export const registerCallHandlers: RegisterCallHandlers = (register) => {
  SileroScheduler.forThread();
  register(PIPELINE_CALL_HANDLER, createPipelineCallHandler());
};

/** File URL of this module, for `WorkerHost.startCall(…, { handlerModule })`. */
export const CALL_HANDLERS_MODULE = import.meta.url;
