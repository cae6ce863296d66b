import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/store/database.js';
import { migrate } from '../../src/store/migrate.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { Store } from '../../src/store/store.js';

const url = process.env.PARLA_TEST_DATABASE_URL;

describe.skipIf(url === undefined || url === '')('migrations on PostgreSQL', () => {
  it('two nodes starting at once apply each migration exactly once', async () => {
    const schema = `parla_test_${randomBytes(6).toString('hex')}`;
    const [a, b] = await Promise.all([
      openDatabase({ databaseUrl: url!, schema }),
      openDatabase({ databaseUrl: url!, schema }),
    ]);
    try {
      const rows = await a.sql<
        { version: number }[]
      >`select version from schema_migrations order by version`;
      expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
      // A third run finds nothing to do.
      expect(await migrate(b.sql, schema)).toEqual([]);
    } finally {
      await a.close();
      await b.close();
      const admin = postgres(url!, { max: 1, onnotice: () => undefined });
      await admin`drop schema ${admin(schema)} cascade`;
      await admin.end();
    }
  });
});

describe('embedded store', () => {
  it('persists under the data directory across restarts', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'parla-store-'));
    try {
      const first = await Store.open({ dataDir });
      const orgId = await first.keys.createOrg('kept');
      const created = await first.resources.assistants.create(orgId, { name: 'persisted' });
      await first.close();

      const second = await Store.open({ dataDir });
      expect((await second.resources.assistants.get(orgId, created.id))?.name).toBe('persisted');
      await second.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
