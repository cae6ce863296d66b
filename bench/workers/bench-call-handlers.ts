/**
 * Worker-side handler module of the pipeline-calls benchmark: the real pipeline call handler
 * (src/calls/pipeline-call-handler.ts) with the in-process fake vendors of fake-vendors.ts.
 */
import { createPipelineCallHandler } from '../../src/calls/pipeline-call-handler.js';
import type { RegisterCallHandlers } from '../../src/workers/protocol.js';
import { fakeWorkerProviders } from './fake-vendors.js';

export const BENCH_PIPELINE_HANDLER = 'bench-pipeline';

const providers = fakeWorkerProviders();

export const registerCallHandlers: RegisterCallHandlers = (register) => {
  register(BENCH_PIPELINE_HANDLER, createPipelineCallHandler({ providers: () => providers }));
};
