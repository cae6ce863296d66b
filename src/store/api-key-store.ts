import { createHash } from 'node:crypto';
import type postgres from 'postgres';
import { newId, newToken } from '../core/ids.js';

export interface ApiKeyInfo {
  id: string;
  orgId: string;
  name: string | null;
  createdAt: string;
  revokedAt: string | null;
}

/** Keys are 256-bit random tokens, so a plain SHA-256 is a sound at-rest hash for them. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

interface CacheEntry {
  orgId: string | null;
  expiresAtMs: number;
}

const CACHE_MAX_ENTRIES = 10_000;

/** Organizations and their API keys, stored hashed. */
export class ApiKeyStore {
  readonly #sql: postgres.Sql;
  readonly #cacheTtlMs: number;
  readonly #cache = new Map<string, CacheEntry>();

  constructor(sql: postgres.Sql, cacheTtlMs: number) {
    this.#sql = sql;
    this.#cacheTtlMs = cacheTtlMs;
  }

  async createOrg(name: string, id: string = newId()): Promise<string> {
    const now = new Date();
    await this
      .#sql`insert into orgs (id, name, created_at, updated_at) values (${id}, ${name}, ${now}, ${now})`;
    return id;
  }

  async listOrgs(): Promise<{ id: string; name: string; createdAt: string }[]> {
    const rows = await this.#sql<{ id: string; name: string; created_at: Date }[]>`
      select id, name, created_at from orgs order by created_at, id`;
    return rows.map((r) => ({ id: r.id, name: r.name, createdAt: r.created_at.toISOString() }));
  }

  /** Stores a key (given, or a new one) for the org and returns it in clear, once. */
  async createKey(
    orgId: string,
    name: string | null,
    key: string = newToken('parla_'),
  ): Promise<{ id: string; key: string }> {
    const id = newId();
    await this.#sql`
      insert into api_keys (id, org_id, key_hash, name, created_at)
      values (${id}, ${orgId}, ${hashApiKey(key)}, ${name}, ${new Date()})`;
    return { id, key };
  }

  async hasKey(key: string): Promise<boolean> {
    const rows = await this.#sql`select 1 from api_keys where key_hash = ${hashApiKey(key)}`;
    return rows.length > 0;
  }

  async listKeys(orgId?: string): Promise<ApiKeyInfo[]> {
    const sql = this.#sql;
    const rows = await sql<
      {
        id: string;
        org_id: string;
        name: string | null;
        created_at: Date;
        revoked_at: Date | null;
      }[]
    >`
      select id, org_id, name, created_at, revoked_at from api_keys
      ${orgId === undefined ? sql`` : sql`where org_id = ${orgId}`}
      order by created_at, id`;
    return rows.map((r) => ({
      id: r.id,
      orgId: r.org_id,
      name: r.name,
      createdAt: r.created_at.toISOString(),
      revokedAt: r.revoked_at?.toISOString() ?? null,
    }));
  }

  async revokeKey(id: string): Promise<boolean> {
    const rows = await this
      .#sql`update api_keys set revoked_at = ${new Date()} where id = ${id} and revoked_at is null returning id`;
    this.#cache.clear();
    return rows.length > 0;
  }

  /** The org a key belongs to, or null. Answers are cached for a short while (positive and negative). */
  async authenticate(key: string): Promise<string | null> {
    const hash = hashApiKey(key);
    const nowMs = Date.now();
    const cached = this.#cache.get(hash);
    if (cached !== undefined && cached.expiresAtMs > nowMs) {
      return cached.orgId;
    }
    const [row] = await this.#sql<{ org_id: string }[]>`
      select org_id from api_keys where key_hash = ${hash} and revoked_at is null`;
    const orgId = row?.org_id ?? null;
    if (this.#cacheTtlMs > 0) {
      if (this.#cache.size >= CACHE_MAX_ENTRIES) {
        this.#cache.clear();
      }
      this.#cache.set(hash, { orgId, expiresAtMs: nowMs + this.#cacheTtlMs });
    }
    return orgId;
  }
}
