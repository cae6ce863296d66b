/**
 * Child process of bench/control-throughput.ts: starts Parla's control plane (embedded store,
 * or PostgreSQL when BENCH_DATABASE_URL is set) and a bare Fastify server, then prints their
 * ports and a key as one JSON line.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { Server } from 'node:http';
import { join } from 'node:path';
import Fastify from 'fastify';
import { buildApp } from '../src/control/app.js';
import { Store } from '../src/store/store.js';

const dataDir = mkdtempSync(join(tmpdir(), 'parla-bench-'));
const databaseUrl = process.env.BENCH_DATABASE_URL ?? '';
const store = await Store.open({
  dataDir,
  ...(databaseUrl !== '' ? { databaseUrl, schema: `parla_bench_${process.pid}` } : {}),
});
const orgId = await store.keys.createOrg('bench');
const { key } = await store.keys.createKey(orgId, 'bench');
const app = await buildApp({
  store,
  publicUrl: 'http://127.0.0.1',
  filesDir: join(dataDir, 'files'),
});
await app.listen({ host: '127.0.0.1', port: 0 });

// Twenty tools, so GET /tool returns a realistic page.
for (let i = 0; i < 20; i += 1) {
  await store.resources.tools.create(orgId, {
    type: 'apiRequest',
    method: 'POST',
    url: 'https://example.test/hook',
    name: `tool_${i}`,
    timeoutSeconds: 20,
  });
}
const sample = await store.resources.tools.list(orgId, { limit: 100 });

const bare = Fastify({ logger: false });
bare.get('/tool', () => sample);
bare.post('/assistant', (request, reply) =>
  reply.code(201).send({ id: 'x', ...(request.body as object) }),
);
await bare.listen({ host: '127.0.0.1', port: 0 });

const port = (instance: { server: Server }): number => {
  const address = instance.server.address();
  return typeof address === 'object' && address !== null ? address.port : 0;
};
process.stdout.write(
  JSON.stringify({ parlaPort: port(app), barePort: port(bare), key, store: store.db.kind }) + '\n',
);

process.on('SIGTERM', () => {
  void Promise.all([app.close(), bare.close()])
    .then(async () => {
      if (databaseUrl !== '') {
        await store.db
          .sql`drop schema if exists ${store.db.sql(`parla_bench_${process.pid}`)} cascade`;
      }
      await store.close();
    })
    .finally(() => process.exit(0));
});
