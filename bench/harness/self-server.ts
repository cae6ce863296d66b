/**
 * The Parla a `--self` run starts (as a child process, see self-parla.ts): the composition of
 * src/main.ts (store, worker host, call engine with the call reporter, SIP and websocket servers,
 * control plane) from the same modules and the same environment settings; self-parla.ts sets
 * the worker watchdog to wait 30 s instead of 2 s for a heartbeat. On a machine loaded by other work,
 * a thread loading the Silero model can miss the 2 s heartbeat; the production watchdog then
 * ends its calls with `worker-died` (and terminating a thread holding an onnxruntime session can
 * abort the process, see docs/benchmarks.md), which would end a benchmark instead of measuring it.
 * Prints `Websocket calls on …` when ready; SIGTERM ends the calls and exits.
 */
import { join, resolve } from 'node:path';
import { CallEngine } from '../../src/calls/call-engine.js';
import { CallParamsBuilder } from '../../src/calls/call-params-builder.js';
import { providerSettingsOf } from '../../src/calls/pipeline-call-params.js';
import { createCallReporter } from '../../src/calls/reporting/call-reporter.js';
import { loadPriceTable } from '../../src/calls/reporting/price-table.js';
import { SipServer } from '../../src/calls/sip-server.js';
import { WebsocketCallStarter } from '../../src/calls/websocket-call-starter.js';
import { loadConfig, publicBaseUrl, wsPublicBaseUrl } from '../../src/config/load.js';
import { buildApp } from '../../src/control/app.js';
import { Store } from '../../src/store/store.js';
import { WebsocketServer } from '../../src/transports/websocket/websocket-server.js';
import { WorkerHost } from '../../src/workers/host.js';

const config = loadConfig();
const dataDir = resolve(config.dataDir);
const store = await Store.open({
  dataDir,
  secretKey: config.secretKey,
  logFlushIntervalMs: config.logFlushIntervalMs,
  apiKeyCacheTtlMs: config.apiKeyCacheTtlMs,
});
await store.bootstrap(config.apiKey);
const host = new WorkerHost({
  ...(config.workerThreads === 0 ? {} : { threads: config.workerThreads }),
  heartbeatTimeoutMs: config.workerHeartbeatTimeoutMs,
});
const prices = loadPriceTable();
const engine = new CallEngine({
  store,
  host,
  publicUrl: publicBaseUrl(config),
  wsPublicUrl: wsPublicBaseUrl(config),
  observerFactory: (call, params) =>
    createCallReporter({
      orgId: params.orgId,
      call,
      assistant: params.assistant,
      variableValues: params.variableValues,
      store,
      filesDir: join(dataDir, 'files'),
      publicUrl: publicBaseUrl(config),
      prices,
    }),
  log: (error, message) => console.error(`${message}:`, error),
});
const builder = new CallParamsBuilder(store, {
  providers: providerSettingsOf(config),
  vad: config.vad,
});
// SIP calls (for `--transport sip`): RTP on the range self-parla.ts chose.
const sipServer = await SipServer.start({
  store,
  engine,
  builder,
  host: config.host,
  sipPort: config.sipPort,
  rtpPortMin: config.rtpPortMin,
  rtpPortMax: config.rtpPortMax,
  log: (error, message) => console.error(`${message}:`, error),
});
const wsServer = new WebsocketServer({ registry: engine });
const wsPort = await wsServer.listen(config.host, config.wsPort);
const app = await buildApp({
  store,
  callStarter: new WebsocketCallStarter(store, engine, builder),
  liveCalls: engine,
  publicUrl: publicBaseUrl(config),
  filesDir: join(dataDir, 'files'),
  logger: false,
});
await app.listen({ host: config.host, port: config.port });
process.stdout.write(`SIP calls on ${config.host}:${sipServer.port}\n`);
process.stdout.write(`Websocket calls on ws://${config.host}:${wsPort}\n`);

let closing = false;
process.on('SIGTERM', () => {
  if (closing) {
    return;
  }
  closing = true;
  // Threads are not terminated (see above): the process exits once the calls are stored.
  void engine
    .close({ drainMs: 0 })
    .then(() => sipServer.close())
    .then(() => wsServer.close())
    .then(() => app.close())
    .then(() => store.close())
    .finally(() => process.exit(0));
});
