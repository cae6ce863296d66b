import type postgres from 'postgres';
import { ParlaError } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { containsSealed, redactSecrets, type SecretBox } from './secret-box.js';

export type Doc = Record<string, unknown>;

/** A resource as the API returns it. */
export interface Resource extends Doc {
  id: string;
  orgId: string;
  createdAt: string;
  updatedAt: string;
}

export interface ResourceTable {
  readonly table: string;
  /** Top-level document fields copied into real columns for filtering: field → column. */
  readonly columns: Readonly<Record<string, string>>;
}

export const DATE_FILTERS = [
  'createdAtGt',
  'createdAtLt',
  'createdAtGe',
  'createdAtLe',
  'updatedAtGt',
  'updatedAtLt',
  'updatedAtGe',
  'updatedAtLe',
] as const;
export type DateFilterName = (typeof DATE_FILTERS)[number];
export type DateFilters = Partial<Record<DateFilterName, string>>;

export interface ListQuery {
  limit: number;
  dates?: DateFilters;
  /** Column filters by document field name: one value, or any of several. */
  equals?: Readonly<Record<string, string | readonly string[] | undefined>>;
  page?: number;
  sortOrder?: 'ASC' | 'DESC';
  sortBy?: 'createdAt' | 'updatedAt';
}

interface Row {
  id: string;
  org_id: string;
  created_at: Date;
  updated_at: Date;
  doc: Doc;
}

const IDENTITY_FIELDS = ['id', 'orgId', 'createdAt', 'updatedAt'];
const UPDATE_ATTEMPTS = 5;

/**
 * Org-scoped JSONB document storage for one resource kind. Every query names the org, so a row
 * of another org is indistinguishable from a missing one. Secrets are sealed on write.
 */
export class ResourceStore {
  readonly #sql: postgres.Sql;
  readonly #def: ResourceTable;
  readonly #secrets: SecretBox;
  readonly #columnNames: readonly string[];
  /** The last queued update of each row being updated, by `orgId/id`. */
  readonly #rowQueues = new Map<string, Promise<void>>();

  constructor(sql: postgres.Sql, def: ResourceTable, secrets: SecretBox) {
    this.#sql = sql;
    this.#def = def;
    this.#secrets = secrets;
    this.#columnNames = Object.values(def.columns);
  }

  get table(): string {
    return this.#def.table;
  }

  async create(orgId: string, doc: Doc, id: string = newId()): Promise<Resource> {
    const now = new Date();
    const stored = this.#secrets.sealDoc(stripIdentity(doc));
    const row = {
      id,
      org_id: orgId,
      created_at: now,
      updated_at: now,
      doc: this.#sql.json(stored as postgres.JSONValue),
      ...this.#columnValues(stored),
    };
    const sql = this.#sql;
    try {
      await sql`insert into ${sql(this.#def.table)} ${sql(row)}`;
    } catch (error) {
      throw translateDbError(error);
    }
    return toResource({ id, org_id: orgId, created_at: now, updated_at: now, doc: stored });
  }

  /** The resource as the API shows it (secrets removed), or null. */
  async get(orgId: string, id: string): Promise<Resource | null> {
    const row = await this.#getRow(orgId, id);
    return row === null ? null : toResource(row);
  }

  /** The resource with its secrets opened, for Parla's own use; never return it to a client. */
  async getInternal(orgId: string, id: string): Promise<Resource | null> {
    const row = await this.#getRow(orgId, id);
    return row === null ? null : toResource(row, this.#secrets);
  }

  async list(orgId: string, query: ListQuery): Promise<Resource[]> {
    const sql = this.#sql;
    const offset = ((query.page ?? 1) - 1) * query.limit;
    const rows = await sql<Row[]>`
      select id, org_id, created_at, updated_at, doc from ${sql(this.#def.table)}
      where ${this.#where(orgId, query)}
      order by ${sql(sortColumn(query))} ${query.sortOrder === 'ASC' ? sql`asc` : sql`desc`}, id
      limit ${query.limit} offset ${offset}`;
    return rows.map((row) => toResource(row));
  }

  /**
   * Rows of any org whose filter column `field` holds one of `values`, oldest first. Only for
   * Parla's own routing (an inbound call names a number, not an org); the column must be
   * indexed on its own for this to stay a lookup (phone_numbers.number is).
   */
  async findAcrossOrgs(
    field: string,
    values: readonly string[],
    limit: number,
  ): Promise<Resource[]> {
    const column = this.#def.columns[field];
    if (column === undefined) {
      throw new Error(`${this.#def.table} has no filter column for ${field}`);
    }
    if (values.length === 0 || limit <= 0) {
      return [];
    }
    const sql = this.#sql;
    const rows = await sql<Row[]>`
      select id, org_id, created_at, updated_at, doc from ${sql(this.#def.table)}
      where ${sql(column)} in ${sql(values as string[])}
      order by created_at asc, id
      limit ${limit}`;
    return rows.map((row) => toResource(row));
  }

  async count(orgId: string, query: ListQuery): Promise<number> {
    const sql = this.#sql;
    const [row] = await sql<{ n: string }[]>`
      select count(*) as n from ${sql(this.#def.table)} where ${this.#where(orgId, query)}`;
    return Number(row?.n ?? 0);
  }

  /**
   * Read-modify-write with optimistic concurrency: `mutate` receives the stored document (secrets
   * still sealed) and returns the next one; the write applies only if the row has not changed
   * meanwhile, else the read and `mutate` run again. `mutate` runs outside any transaction, so it
   * may query the store (the embedded store has a single connection). Updates of one row from
   * this process queue behind each other, so retries are needed only across processes.
   */
  update(
    orgId: string,
    id: string,
    mutate: (current: Resource) => Doc | Promise<Doc>,
  ): Promise<Resource | null> {
    const key = `${orgId}/${id}`;
    const previous = this.#rowQueues.get(key) ?? Promise.resolve();
    const run = previous.then(() => this.#updateOnce(orgId, id, mutate));
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.#rowQueues.set(key, settled);
    void settled.then(() => {
      if (this.#rowQueues.get(key) === settled) {
        this.#rowQueues.delete(key);
      }
    });
    return run;
  }

  async #updateOnce(
    orgId: string,
    id: string,
    mutate: (current: Resource) => Doc | Promise<Doc>,
  ): Promise<Resource | null> {
    const sql = this.#sql;
    const table = this.#def.table;
    for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt += 1) {
      const row = await this.#getRow(orgId, id);
      if (row === null) {
        return null;
      }
      const next = this.#secrets.sealDoc(stripIdentity(await mutate(toResource(row, null))));
      // Strictly later than the stored time, so each write moves updatedAt forward.
      const now = new Date(Math.max(Date.now(), row.updated_at.getTime() + 1));
      const set = {
        doc: sql.json(next as postgres.JSONValue),
        updated_at: now,
        ...this.#columnValues(next),
      };
      let written: postgres.RowList<postgres.Row[]>;
      try {
        written = await sql`
          update ${sql(table)} set ${sql(set)}
          where org_id = ${orgId} and id = ${id} and updated_at = ${row.updated_at}
          returning id`;
      } catch (error) {
        throw translateDbError(error);
      }
      if (written.length === 1) {
        return toResource({ ...row, updated_at: now, doc: next });
      }
    }
    throw new ParlaError(
      'ERR_CONFLICT',
      `${table} ${id} is being changed by other requests; try again`,
    );
  }

  async delete(orgId: string, id: string): Promise<Resource | null> {
    const sql = this.#sql;
    const [row] = await sql<Row[]>`
      delete from ${sql(this.#def.table)} where org_id = ${orgId} and id = ${id}
      returning id, org_id, created_at, updated_at, doc`;
    return row === undefined ? null : toResource(row);
  }

  async #getRow(orgId: string, id: string): Promise<Row | null> {
    const sql = this.#sql;
    const [row] = await sql<Row[]>`
      select id, org_id, created_at, updated_at, doc from ${sql(this.#def.table)}
      where org_id = ${orgId} and id = ${id}`;
    return row ?? null;
  }

  #where(orgId: string, query: ListQuery): postgres.PendingQuery<postgres.Row[]> {
    const sql = this.#sql;
    let where = sql`org_id = ${orgId}`;
    for (const [name, value] of Object.entries(query.dates ?? {})) {
      if (value !== undefined) {
        where = sql`${where} and ${dateCondition(sql, name as DateFilterName, new Date(value))}`;
      }
    }
    for (const [field, value] of Object.entries(query.equals ?? {})) {
      const column = field === 'id' ? 'id' : this.#def.columns[field];
      if (value === undefined || column === undefined) {
        continue;
      }
      where =
        typeof value === 'string'
          ? sql`${where} and ${sql(column)} = ${value}`
          : sql`${where} and ${sql(column)} in ${sql(value as string[])}`;
    }
    return where;
  }

  #columnValues(doc: Doc): Record<string, string | null> {
    const values: Record<string, string | null> = {};
    for (const [field, column] of Object.entries(this.#def.columns)) {
      const value = doc[field];
      values[column] = typeof value === 'string' ? value : null;
    }
    return values;
  }

  /** Column names this table filters on (for tests and diagnostics). */
  get filterColumns(): readonly string[] {
    return this.#columnNames;
  }
}

function sortColumn(query: ListQuery): string {
  return query.sortBy === 'updatedAt' ? 'updated_at' : 'created_at';
}

function dateCondition(
  sql: postgres.Sql,
  name: DateFilterName,
  value: Date,
): postgres.PendingQuery<postgres.Row[]> {
  const column = sql(name.startsWith('created') ? 'created_at' : 'updated_at');
  switch (name.slice(-2)) {
    case 'Gt':
      return sql`${column} > ${value}`;
    case 'Lt':
      return sql`${column} < ${value}`;
    case 'Ge':
      return sql`${column} >= ${value}`;
    default:
      return sql`${column} <= ${value}`;
  }
}

function stripIdentity(doc: Doc): Doc {
  const out: Doc = {};
  for (const [key, value] of Object.entries(doc)) {
    if (!IDENTITY_FIELDS.includes(key) && value !== undefined) {
      out[key] = value;
    }
  }
  return out;
}

/** `secrets` opens sealed fields; null keeps them sealed; absent removes them. */
function toResource(row: Row, secrets?: SecretBox | null): Resource {
  const doc =
    secrets === undefined
      ? containsSealed(row.doc)
        ? redactSecrets(row.doc)
        : row.doc
      : secrets === null
        ? row.doc
        : secrets.openDoc(row.doc);
  return {
    id: row.id,
    orgId: row.org_id,
    ...doc,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

/** Maps constraint violations to API errors; anything else passes through. */
export function translateDbError(error: unknown): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === '23505') {
    const detail = (error as { detail?: string }).detail ?? '';
    return new ParlaError(
      'ERR_CONFLICT',
      `a resource with the same unique value exists ${detail}`.trim(),
      {
        cause: error,
      },
    );
  }
  return error;
}
