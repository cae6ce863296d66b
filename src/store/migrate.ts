import type postgres from 'postgres';
import { MIGRATIONS } from './migrations/index.js';

/**
 * Applies pending migrations, each in its own transaction, under a session advisory lock keyed by
 * schema so that two nodes starting at once apply each migration exactly once.
 */
export async function migrate(sql: postgres.Sql, schema: string): Promise<number[]> {
  const reserved = await sql.reserve();
  const lockKey = `parla:migrate:${schema}`;
  try {
    await reserved`select pg_advisory_lock(hashtext(${lockKey}))`;
    await reserved`
      create table if not exists schema_migrations (
        version integer primary key,
        name text not null,
        applied_at timestamptz not null default now()
      )`;
    const rows = await reserved<{ version: number }[]>`select version from schema_migrations`;
    const applied = new Set(rows.map((r) => r.version));
    const done: number[] = [];
    for (const migration of MIGRATIONS) {
      if (applied.has(migration.version)) {
        continue;
      }
      await reserved`begin`;
      try {
        await reserved.unsafe(migration.sql);
        await reserved`insert into schema_migrations (version, name) values (${migration.version}, ${migration.name})`;
        await reserved`commit`;
      } catch (error) {
        await reserved`rollback`;
        throw error;
      }
      done.push(migration.version);
    }
    return done;
  } finally {
    await reserved`select pg_advisory_unlock(hashtext(${lockKey}))`.catch(() => undefined);
    reserved.release();
  }
}
