import { join } from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import type { CallStarter } from '../../src/calls/call-starter.js';
import { buildApp } from '../../src/control/app.js';
import type { ModelProviderRegistry } from '../../src/providers/llm/model-provider.js';
import type { Store } from '../../src/store/store.js';
import type { StoreTarget } from './store-targets.js';

export interface Harness {
  app: FastifyInstance;
  store: Store;
  dataDir: string;
  /** Keys of two separate orgs, for tenancy tests. */
  keyA: string;
  keyB: string;
  orgA: string;
  orgB: string;
  /** inject() as org A (or with the given key); JSON bodies are sent as JSON. */
  request(options: InjectOptions & { key?: string | null }): Promise<LightMyRequestResponse>;
  /** Shorthands returning [statusCode, parsed body]. */
  post(url: string, body?: unknown, key?: string): Promise<[number, any]>;
  get(url: string, key?: string): Promise<[number, any]>;
  patch(url: string, body?: unknown, key?: string): Promise<[number, any]>;
  del(url: string, key?: string): Promise<[number, any]>;
}

export interface HarnessOptions {
  callStarter?: CallStarter;
  models?: ModelProviderRegistry;
  maxFileBytes?: number;
}

/** Opens a store on `target`, two orgs with a key each and the app; closes all after the file. */
export function useHarness(target: StoreTarget, options: HarnessOptions = {}): Harness {
  const h = {} as Harness;
  let cleanup: () => Promise<void> = () => Promise.resolve();
  beforeAll(async () => {
    const opened = await target.open();
    cleanup = opened.cleanup;
    h.store = opened.store;
    h.dataDir = opened.dataDir;
    h.orgA = await h.store.keys.createOrg('org-a');
    h.orgB = await h.store.keys.createOrg('org-b');
    h.keyA = (await h.store.keys.createKey(h.orgA, 'test')).key;
    h.keyB = (await h.store.keys.createKey(h.orgB, 'test')).key;
    h.app = await buildApp({
      store: h.store,
      publicUrl: 'http://parla.test',
      filesDir: join(opened.dataDir, 'files'),
      ...options,
    });
    await h.app.ready();
  });
  afterAll(async () => {
    await h.app?.close();
    await cleanup();
  });
  h.request = (opts) => {
    const { key, ...rest } = opts;
    const headers: Record<string, string> = {
      ...(rest.headers as Record<string, string> | undefined),
    };
    const useKey = key === undefined ? h.keyA : key;
    if (useKey !== null) {
      headers.authorization = `Bearer ${useKey}`;
    }
    return h.app.inject({ ...rest, headers });
  };
  const call = async (
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    body?: unknown,
    key?: string,
  ): Promise<[number, any]> => {
    const response = await h.request({
      method,
      url,
      ...(body === undefined ? {} : { payload: body as Record<string, unknown> }),
      ...(key === undefined ? {} : { key }),
    });
    const text = response.body;
    return [response.statusCode, text === '' ? undefined : (JSON.parse(text) as unknown)];
  };
  h.post = (url, body, key) => call('POST', url, body ?? {}, key);
  h.get = (url, key) => call('GET', url, undefined, key);
  h.patch = (url, body, key) => call('PATCH', url, body ?? {}, key);
  h.del = (url, key) => call('DELETE', url, undefined, key);
  return h;
}
