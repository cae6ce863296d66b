import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import postgres from 'postgres';
import { migrate } from './migrate.js';

export type Sql = postgres.Sql;

export interface DatabaseOptions {
  /** A PostgreSQL URL; empty or absent means the embedded PGlite. */
  databaseUrl?: string;
  /** Where the embedded PGlite keeps its files; `memory://` keeps nothing. */
  embeddedDataDir?: string;
  /** Schema to create and use on a PostgreSQL server (tests give each run its own). */
  schema?: string;
  /** Connections in the pool on a PostgreSQL server. */
  maxConnections?: number;
}

export interface Database {
  readonly sql: Sql;
  readonly kind: 'postgres' | 'pglite';
  readonly schema: string;
  close(): Promise<void>;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Opens the store and applies pending migrations. Both kinds speak to the same `postgres`
 * driver: PGlite is served on a loopback socket by pglite-socket, so one SQL code path serves both.
 */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const schema = options.schema ?? 'public';
  if (!SCHEMA_NAME.test(schema)) {
    throw new Error(`invalid schema name: ${schema}`);
  }
  const db =
    options.databaseUrl !== undefined && options.databaseUrl !== ''
      ? await openServer(options.databaseUrl, schema, options.maxConnections ?? 10)
      : await openEmbedded(options.embeddedDataDir ?? 'memory://');
  try {
    await migrate(db.sql, db.schema);
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}

async function openServer(url: string, schema: string, max: number): Promise<Database> {
  const common = { onnotice: () => undefined, max, idle_timeout: 30, connect_timeout: 10 };
  if (schema !== 'public') {
    const admin = postgres(url, { ...common, max: 1 });
    try {
      await admin`create schema if not exists ${admin(schema)}`.catch((error: unknown) => {
        // Two nodes creating the schema at once: one wins, the other sees a unique violation.
        if ((error as { code?: string }).code !== '23505') {
          throw error;
        }
      });
    } finally {
      await admin.end();
    }
  }
  const sql = postgres(url, { ...common, connection: { search_path: schema } });
  return {
    sql,
    kind: 'postgres',
    schema,
    close: () => sql.end({ timeout: 5 }),
  };
}

async function openEmbedded(dataDir: string): Promise<Database> {
  const location = dataDir === 'memory://' ? dataDir : resolve(dataDir);
  let releaseLock = (): void => undefined;
  if (location !== 'memory://') {
    mkdirSync(location, { recursive: true });
    releaseLock = lockDataDir(join(location, 'parla.lock'));
  }
  const pglite = await PGlite.create(location === 'memory://' ? undefined : location);
  // PGlite runs one query at a time; one connection keeps transactions from interleaving.
  const server = new PGLiteSocketServer({
    db: pglite,
    host: '127.0.0.1',
    port: 0,
    maxConnections: 1,
  });
  await server.start();
  const port = server.getServerConn().split(':').pop();
  const sql = postgres({
    host: '127.0.0.1',
    port: Number(port),
    database: 'postgres',
    username: 'postgres',
    max: 1,
    onnotice: () => undefined,
  });
  return {
    sql,
    kind: 'pglite',
    schema: 'public',
    close: async () => {
      await sql.end({ timeout: 5 });
      await server.stop();
      await pglite.close();
      releaseLock();
    },
  };
}

/** The embedded store's folder under the data directory. */
export function embeddedDir(dataDir: string): string {
  return join(dataDir, 'pglite');
}

/**
 * PGlite's files must have one process at a time: a second Parla (or the CLI) on the same data
 * directory while the server runs would corrupt them, so it is refused with a clear message.
 */
function lockDataDir(lockFile: string): () => void {
  try {
    writeFileSync(lockFile, String(process.pid), { flag: 'wx' });
  } catch {
    const pid = Number(readFileSync(lockFile, 'utf8'));
    if (Number.isInteger(pid) && pid !== process.pid && isAlive(pid)) {
      throw new Error(
        `the embedded store in ${dirname(lockFile)} is in use by process ${pid}; stop it first or set DATABASE_URL`,
      );
    }
    writeFileSync(lockFile, String(process.pid));
  }
  return () => rmSync(lockFile, { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
