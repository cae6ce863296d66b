import type postgres from 'postgres';
import { newId } from '../core/ids.js';
import type { DateFilterName, DateFilters } from './resource-store.js';

export const LOG_TYPES = ['API', 'Webhook', 'Call', 'Provider'] as const;
export type LogType = (typeof LOG_TYPES)[number];

/** A log entry with the fields of the interface spec. */
export interface LogEntry {
  time: string;
  orgId: string;
  type: LogType;
  webhookType?: string;
  resource?: string;
  requestDurationSeconds?: number;
  requestStartedAt?: string;
  requestFinishedAt?: string;
  requestBody?: unknown;
  requestHttpMethod?: string;
  requestUrl?: string;
  requestPath?: string;
  requestQuery?: string;
  responseHttpCode?: number;
  requestIpAddress?: string;
  requestOrigin?: string;
  responseBody?: unknown;
  requestHeaders?: Record<string, unknown>;
  error?: { message: string };
  assistantId?: string;
  phoneNumberId?: string;
  customerId?: string;
  squadId?: string;
  callId?: string;
}

export interface LogQuery {
  type?: LogType;
  webhookType?: string;
  assistantId?: string;
  phoneNumberId?: string;
  customerId?: string;
  squadId?: string;
  callId?: string;
  dates?: DateFilters;
  page: number;
  limit: number;
  sortOrder: 'ASC' | 'DESC';
}

const FILTER_COLUMNS = {
  type: 'type',
  webhookType: 'webhook_type',
  assistantId: 'assistant_id',
  phoneNumberId: 'phone_number_id',
  customerId: 'customer_id',
  squadId: 'squad_id',
  callId: 'call_id',
} as const;

/**
 * The entry with every NUL character in its strings replaced by U+FFFD: PostgreSQL's jsonb (and
 * text) refuse NUL, and a request that carried one (rejected or not) should still be logged.
 */
function withoutNul(entry: LogEntry): LogEntry {
  return JSON.parse(
    JSON.stringify(entry, (_key, value: unknown) =>
      typeof value === 'string' ? value.replaceAll('\u0000', '\uFFFD') : value,
    ),
  ) as LogEntry;
}

/** Rows per insert: 11 parameters a row stays far below PostgreSQL's 65,535. */
const WRITE_BATCH_ROWS = 1000;

const DATE_OPERATORS: Record<string, string> = { Gt: '>', Lt: '<', Ge: '>=', Le: '<=' };

/**
 * Log entries, written in batches off the request path: `append` only queues; a timer flushes
 * the queue in one multi-row insert. The queue is bounded; past it the oldest entries are dropped
 * and counted, so a slow store can never grow memory without bound.
 */
export class LogStore {
  readonly #sql: postgres.Sql;
  readonly #flushIntervalMs: number;
  readonly #maxQueued: number;
  #queue: LogEntry[] = [];
  #timer: NodeJS.Timeout | null = null;
  #flushing: Promise<void> = Promise.resolve();
  #dropped = 0;

  constructor(sql: postgres.Sql, flushIntervalMs: number, maxQueued = 10_000) {
    this.#sql = sql;
    this.#flushIntervalMs = flushIntervalMs;
    this.#maxQueued = maxQueued;
  }

  get droppedCount(): number {
    return this.#dropped;
  }

  append(entry: LogEntry): void {
    if (this.#queue.length >= this.#maxQueued) {
      this.#queue.shift();
      this.#dropped += 1;
    }
    this.#queue.push(entry);
    if (this.#timer === null) {
      this.#timer = setTimeout(() => void this.flush(), this.#flushIntervalMs);
      this.#timer.unref();
    }
  }

  /** Writes everything queued so far; resolves when it is stored. */
  flush(): Promise<void> {
    if (this.#timer !== null) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
    // The batch is taken when its write starts, so entries wait in the bounded queue, not here.
    this.#flushing = this.#flushing.then(async () => {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, WRITE_BATCH_ROWS);
        await this.#write(batch);
      }
    });
    return this.#flushing;
  }

  async #write(batch: LogEntry[]): Promise<void> {
    try {
      await this.#insert(batch);
    } catch {
      // One bad entry must not lose the others: retry them one by one.
      for (const entry of batch) {
        try {
          await this.#insert([entry]);
        } catch {
          await this.#insertOrDrop(withoutNul(entry));
        }
      }
    }
  }

  /** Last try for one entry; an entry that still fails is counted and reported, never thrown. */
  async #insertOrDrop(entry: LogEntry): Promise<void> {
    try {
      await this.#insert([entry]);
    } catch (error) {
      this.#dropped += 1;
      process.emitWarning(`parla: a log entry could not be stored: ${String(error)}`);
    }
  }

  async #insert(batch: LogEntry[]): Promise<void> {
    const sql = this.#sql;
    const rows = batch.map((entry) => ({
      id: newId(),
      org_id: entry.orgId,
      time: new Date(entry.time),
      type: entry.type,
      webhook_type: entry.webhookType ?? null,
      assistant_id: entry.assistantId ?? null,
      phone_number_id: entry.phoneNumberId ?? null,
      customer_id: entry.customerId ?? null,
      squad_id: entry.squadId ?? null,
      call_id: entry.callId ?? null,
      doc: sql.json(entry as unknown as postgres.JSONValue),
    }));
    await sql`insert into logs ${sql(rows)}`;
  }

  async list(orgId: string, query: LogQuery): Promise<{ results: LogEntry[]; total: number }> {
    const sql = this.#sql;
    const where = this.#where(orgId, query);
    const offset = (query.page - 1) * query.limit;
    const [rows, counted] = await Promise.all([
      sql<{ doc: LogEntry }[]>`
        select doc from logs where ${where}
        order by time ${query.sortOrder === 'ASC' ? sql`asc` : sql`desc`}, id
        limit ${query.limit} offset ${offset}`,
      sql<{ n: string }[]>`select count(*) as n from logs where ${where}`,
    ]);
    return { results: rows.map((r) => r.doc), total: Number(counted[0]?.n ?? 0) };
  }

  async delete(orgId: string, query: Partial<LogQuery>): Promise<number> {
    const sql = this.#sql;
    const rows = await sql`delete from logs where ${this.#where(orgId, query)} returning id`;
    return rows.length;
  }

  #where(orgId: string, query: Partial<LogQuery>): postgres.PendingQuery<postgres.Row[]> {
    const sql = this.#sql;
    let where = sql`org_id = ${orgId}`;
    for (const [field, column] of Object.entries(FILTER_COLUMNS)) {
      const value = query[field as keyof typeof FILTER_COLUMNS];
      if (value !== undefined) {
        where = sql`${where} and ${sql(column)} = ${value}`;
      }
    }
    // Log entries have one timestamp: both createdAt* and updatedAt* filters apply to `time`.
    for (const [name, value] of Object.entries(query.dates ?? {})) {
      const operator = DATE_OPERATORS[(name as DateFilterName).slice(-2)];
      if (value !== undefined && operator !== undefined) {
        where = sql`${where} and time ${sql.unsafe(operator)} ${new Date(value)}`;
      }
    }
    return where;
  }

  async close(): Promise<void> {
    await this.flush();
  }
}
