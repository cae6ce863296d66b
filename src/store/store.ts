import { join } from 'node:path';
import { ApiKeyStore } from './api-key-store.js';
import { embeddedDir, openDatabase, type Database } from './database.js';
import { LogStore } from './log-store.js';
import { ResourceStore, type ResourceTable } from './resource-store.js';
import { SecretBox } from './secret-box.js';

export const RESOURCE_TABLES = {
  assistants: { table: 'assistants', columns: {} },
  calls: {
    table: 'calls',
    columns: { assistantId: 'assistant_id', phoneNumberId: 'phone_number_id', status: 'status' },
  },
  phoneNumbers: {
    table: 'phone_numbers',
    columns: { number: 'number', credentialId: 'credential_id' },
  },
  credentials: { table: 'credentials', columns: { provider: 'provider' } },
  tools: { table: 'tools', columns: { type: 'type' } },
  knowledgeBases: { table: 'knowledge_bases', columns: { provider: 'provider' } },
  files: { table: 'files', columns: { purpose: 'purpose' } },
  workflows: { table: 'workflows', columns: {} },
  squads: { table: 'squads', columns: {} },
  campaigns: { table: 'campaigns', columns: { status: 'status' } },
  chats: {
    table: 'chats',
    columns: {
      assistantId: 'assistant_id',
      squadId: 'squad_id',
      sessionId: 'session_id',
      previousChatId: 'previous_chat_id',
    },
  },
  sessions: {
    table: 'sessions',
    columns: {
      assistantId: 'assistant_id',
      squadId: 'squad_id',
      name: 'name',
      phoneNumberId: 'phone_number_id',
    },
  },
} as const satisfies Record<string, ResourceTable>;

export type ResourceName = keyof typeof RESOURCE_TABLES;

export interface StoreOptions {
  databaseUrl?: string;
  /** Data directory: the embedded database and the secret key file live here. */
  dataDir: string;
  /** Keep the embedded database in memory (tests). */
  inMemory?: boolean;
  schema?: string;
  secretKey?: string;
  logFlushIntervalMs?: number;
  apiKeyCacheTtlMs?: number;
}

/** Everything Parla keeps: one Postgres (server or embedded), with one store per resource kind. */
export class Store {
  readonly db: Database;
  readonly keys: ApiKeyStore;
  readonly logs: LogStore;
  readonly secrets: SecretBox;
  readonly resources: { readonly [K in ResourceName]: ResourceStore };

  private constructor(db: Database, secrets: SecretBox, options: StoreOptions) {
    this.db = db;
    this.secrets = secrets;
    this.keys = new ApiKeyStore(db.sql, options.apiKeyCacheTtlMs ?? 30_000);
    this.logs = new LogStore(db.sql, options.logFlushIntervalMs ?? 250);
    const resources = {} as Record<ResourceName, ResourceStore>;
    for (const [name, def] of Object.entries(RESOURCE_TABLES)) {
      resources[name as ResourceName] = new ResourceStore(db.sql, def, secrets);
    }
    this.resources = resources;
  }

  static async open(options: StoreOptions): Promise<Store> {
    const secrets = SecretBox.fromConfig(
      options.secretKey ?? '',
      join(options.dataDir, 'secret.key'),
    );
    const db = await openDatabase({
      ...(options.databaseUrl !== undefined ? { databaseUrl: options.databaseUrl } : {}),
      embeddedDataDir: options.inMemory === true ? 'memory://' : embeddedDir(options.dataDir),
      ...(options.schema !== undefined ? { schema: options.schema } : {}),
    });
    return new Store(db, secrets, options);
  }

  /**
   * First start: with no org yet, create one with a key (PARLA_API_KEY if given, else a new one)
   * and return the key so it can be printed once. A PARLA_API_KEY that is not stored yet is added
   * to the oldest org on later starts too.
   */
  async bootstrap(apiKey: string): Promise<{ orgId: string; createdKey: string | null }> {
    const orgs = await this.keys.listOrgs();
    if (orgs[0] === undefined) {
      const orgId = await this.keys.createOrg('default');
      const { key } = await this.keys.createKey(
        orgId,
        'bootstrap',
        apiKey === '' ? undefined : apiKey,
      );
      return { orgId, createdKey: key };
    }
    if (apiKey !== '' && !(await this.keys.hasKey(apiKey))) {
      await this.keys.createKey(orgs[0].id, 'bootstrap', apiKey);
      return { orgId: orgs[0].id, createdKey: apiKey };
    }
    return { orgId: orgs[0].id, createdKey: null };
  }

  async close(): Promise<void> {
    await this.logs.close();
    await this.db.close();
  }
}
