import { join, resolve } from 'node:path';
import { loadConfig, publicBaseUrl } from './config/load.js';
import { ParlaError } from './core/errors.js';
import { buildApp } from './control/app.js';
import { createModelRegistry } from './providers/llm/registry.js';
import { Store } from './store/store.js';

/** Composition root: config → store → control plane. */
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
  const app = await buildApp({
    store,
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

  let closing = false;
  const shutdown = (signal: string): void => {
    if (closing) {
      return;
    }
    closing = true;
    process.stdout.write(`${signal}: shutting down\n`);
    void app
      .close()
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
