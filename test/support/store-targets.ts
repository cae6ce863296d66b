import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { Store } from '../../src/store/store.js';

export interface StoreTarget {
  name: 'pglite' | 'postgres';
  open(): Promise<{ store: Store; dataDir: string; cleanup: () => Promise<void> }>;
}

/**
 * The stores every store and API test runs against: the embedded PGlite always, and a real
 * PostgreSQL server when PARLA_TEST_DATABASE_URL names one (.ci/run always sets it). Each opened
 * store on PostgreSQL gets a schema of its own, dropped afterwards, so runs cannot collide.
 */
export function storeTargets(): StoreTarget[] {
  const targets: StoreTarget[] = [
    {
      name: 'pglite',
      open: async () => {
        const dataDir = mkdtempSync(join(tmpdir(), 'parla-test-'));
        const store = await Store.open({ dataDir, inMemory: true, logFlushIntervalMs: 20 });
        return {
          store,
          dataDir,
          cleanup: async () => {
            await store.close();
            rmSync(dataDir, { recursive: true, force: true });
          },
        };
      },
    },
  ];
  const url = process.env.PARLA_TEST_DATABASE_URL;
  if (url !== undefined && url !== '') {
    targets.push({
      name: 'postgres',
      open: async () => {
        const dataDir = mkdtempSync(join(tmpdir(), 'parla-test-'));
        const schema = `parla_test_${randomBytes(6).toString('hex')}`;
        const store = await Store.open({
          dataDir,
          databaseUrl: url,
          schema,
          logFlushIntervalMs: 20,
        });
        return {
          store,
          dataDir,
          cleanup: async () => {
            await store.close();
            const admin = postgres(url, { max: 1, onnotice: () => undefined });
            await admin`drop schema if exists ${admin(schema)} cascade`;
            await admin.end();
            rmSync(dataDir, { recursive: true, force: true });
          },
        };
      },
    });
  } else if (process.env.CI === 'true') {
    throw new Error('CI must set PARLA_TEST_DATABASE_URL so tests run against PostgreSQL too');
  } else {
    console.warn('PARLA_TEST_DATABASE_URL is not set: skipping the PostgreSQL store target');
  }
  return targets;
}
