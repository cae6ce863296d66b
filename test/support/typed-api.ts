import { expect } from 'vitest';
import type { Harness } from './app-harness.js';

export interface Body {
  id: string;
  statusCode: number;
  error: string;
  message: string | string[];
  [key: string]: unknown;
}
export type Reply = [number, Body];

/** The harness with response bodies typed, for tests that lint without `any`. */
export function api(h: Harness) {
  return {
    post: (url: string, body: object, key?: string) => h.post(url, body, key) as Promise<Reply>,
    get: (url: string, key?: string) => h.get(url, key) as Promise<Reply>,
    list: async (url: string, key?: string) => (await h.get(url, key))[1] as Body[],
    patch: (url: string, body: object, key?: string) => h.patch(url, body, key) as Promise<Reply>,
    del: (url: string, key?: string) => h.del(url, key) as Promise<Reply>,
  };
}

/** A 400 body whose messages include `message`. */
export function badRequest(message: string): object {
  return {
    statusCode: 400,
    error: 'Bad Request',
    message: expect.arrayContaining([message]) as unknown,
  };
}
