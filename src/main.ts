import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { CallEngine } from './calls/call-engine.js';
import { CallParamsBuilder } from './calls/call-params-builder.js';
import { providerSettingsOf } from './calls/pipeline-call-params.js';
import { createCallReporter } from './calls/reporting/call-reporter.js';
import { loadPriceTable } from './calls/reporting/price-table.js';
import { PhoneCallStarter } from './calls/phone-call-starter.js';
import { SipCodecs } from './calls/sip-codecs.js';
import { SipServer } from './calls/sip-server.js';
import { sweepStaleCalls } from './calls/stale-call-sweeper.js';
import { WebsocketCallStarter } from './calls/websocket-call-starter.js';
import { loadConfig, publicBaseUrl, wsPublicBaseUrl } from './config/load.js';
import { ParlaError } from './core/errors.js';
import { buildApp } from './control/app.js';
import { createModelRegistry } from './providers/llm/registry.js';
import { Store } from './store/store.js';
import { WebsocketServer } from './transports/websocket/websocket-server.js';
import { WorkerHost } from './workers/host.js';

/** How long running calls may go on after SIGTERM before they end with `worker-shutdown`. */
const SHUTDOWN_DRAIN_MS = 10_000;

/** Composition root: config → store → worker host, call engine, websocket server → control plane. */
async function main(): Promise<void> {
  const config = loadConfig();
  const dataDir = resolve(config.dataDir);
  const store = await Store.open({
    dataDir,
    ...(config.databaseUrl !== '' ? { databaseUrl: config.databaseUrl } : {}),
    secretKey: config.secretKey,
    logFlushIntervalMs: config.logFlushIntervalMs,
    apiKeyCacheTtlMs: config.apiKeyCacheTtlMs,
  });
  if (config.databaseUrl !== '' && config.secretKey === '') {
    process.emitWarning(
      `DATABASE_URL is set without PARLA_SECRET_KEY: secrets are sealed with ${join(dataDir, 'secret.key')}; ` +
        'every node sharing this database must use the same key',
    );
  }
  const { createdKey } = await store.bootstrap(config.apiKey);
  if (createdKey !== null && config.apiKey === '') {
    // Printed once: only its hash is stored.
    process.stdout.write(
      `\nParla created an organization and its API key (shown only this once):\n\n  ${createdKey}\n\n`,
    );
  }
  // Calls a crashed or killed run left live can never go on: end them before taking new ones.
  const swept = await sweepStaleCalls(store);
  if (swept > 0) {
    process.stdout.write(`Ended ${swept} calls the previous run left live\n`);
  }
  const host = new WorkerHost({
    threads: config.workerThreads === 0 ? availableParallelism() : config.workerThreads,
    heartbeatTimeoutMs: config.workerHeartbeatTimeoutMs,
  });
  const log = (error: unknown, message: string): void => {
    if (config.logLevel !== 'silent') {
      console.error(`${message}:`, error);
    }
  };
  const prices = loadPriceTable();
  const engine = new CallEngine({
    store,
    host,
    publicUrl: publicBaseUrl(config),
    wsPublicUrl: wsPublicBaseUrl(config),
    // Server messages (webhooks), artifacts, the recording and costs of every call.
    observerFactory: (call, params) =>
      createCallReporter({
        orgId: params.orgId,
        call,
        assistant: params.assistant,
        variableValues: params.variableValues,
        callParams: params,
        phoneNumber: params.phoneNumber ?? null,
        store,
        filesDir: join(dataDir, 'files'),
        publicUrl: publicBaseUrl(config),
        prices,
      }),
    log,
  });
  const builder = new CallParamsBuilder(store, {
    providers: providerSettingsOf(config),
    vad: config.vad,
  });
  const sipServer = await SipServer.start({
    store,
    engine,
    builder,
    host: config.host,
    sipPort: config.sipPort,
    advertisedHost: config.sipAdvertisedHost,
    rtpPortMin: config.rtpPortMin,
    rtpPortMax: config.rtpPortMax,
    rtpInactivityTimeoutMs: config.rtpInactivityTimeoutMs,
    codecs: SipCodecs.parse(config.sipCodecs),
    log,
  }).catch((error: unknown) => {
    // Another process on the SIP port must not keep the API and websocket calls down.
    console.error(`SIP calls are off: cannot listen on port ${config.sipPort}:`, error);
    return undefined;
  });
  const wsServer = new WebsocketServer({ registry: engine });
  const wsPort = await wsServer.listen(config.host, config.wsPort);
  const app = await buildApp({
    store,
    // Outbound phone calls over SIP; websocket calls as before.
    callStarter: new PhoneCallStarter(
      sipServer?.outbound,
      new WebsocketCallStarter(store, engine, builder),
    ),
    liveCalls: engine,
    publicUrl: publicBaseUrl(config),
    filesDir: join(dataDir, 'files'),
    maxFileBytes: config.maxFileBytes,
    bodyLimitBytes: config.bodyLimitBytes,
    models: createModelRegistry(config),
    logger: config.logLevel === 'silent' ? false : { level: config.logLevel },
  });
  await app.listen({ host: config.host, port: config.port });
  process.stdout.write(
    `Parla API on http://${config.host}:${config.port} (store: ${store.db.kind === 'pglite' ? `embedded, ${dataDir}` : 'PostgreSQL'})\n`,
  );
  process.stdout.write(`Websocket calls on ws://${config.host}:${wsPort}\n`);
  if (sipServer !== undefined) {
    process.stdout.write(`SIP calls on ${config.host}:${sipServer.port} (UDP and TCP)\n`);
  }

  let closing = false;
  const shutdown = (signal: string): void => {
    if (closing) {
      return;
    }
    closing = true;
    process.stdout.write(`${signal}: shutting down\n`);
    // Calls first (their ends are stored), then sockets and threads, the API, the store.
    void engine
      .close({ drainMs: SHUTDOWN_DRAIN_MS })
      .then(() => sipServer?.close())
      .then(() => wsServer.close())
      .then(() => host.close())
      .then(() => app.close())
      .then(() => store.close())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          console.error(error);
          process.exit(1);
        },
      );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

main().catch((error: unknown) => {
  if (error instanceof ParlaError && error.code === 'ERR_CONFIG') {
    console.error(
      `Parla cannot start, bad configuration:\n  ${[error.details].flat().join('\n  ')}`,
    );
  } else {
    console.error('Parla cannot start:', error);
  }
  process.exit(1);
});
