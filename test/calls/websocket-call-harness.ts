/**
 * A real websocket call stack for tests: store (embedded), worker host (one thread, the echo
 * handler), call engine, uWS server on a free port, and the control plane (inject()).
 */
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import WebSocket from 'ws';
import { CallEngine } from '../../src/calls/call-engine.js';
import type {
  CallObserver,
  ObservedEvent,
  ToolCallRequest,
  ToolCallResult,
} from '../../src/calls/call-observer.js';
import { CallParamsBuilder } from '../../src/calls/call-params-builder.js';
import { WebsocketCallStarter } from '../../src/calls/websocket-call-starter.js';
import { buildApp } from '../../src/control/app.js';
import {
  NO_PROVIDER_DEFAULTS,
  type ProviderServerSettings,
} from '../../src/calls/pipeline-call-params.js';
import type { Doc } from '../../src/store/resource-store.js';
import type { Store } from '../../src/store/store.js';
import type { BackpressureLimits } from '../../src/transports/websocket/transport-connection.js';
import type { WebsocketCallRegistry } from '../../src/transports/websocket/types.js';
import { WebsocketServer } from '../../src/transports/websocket/websocket-server.js';
import { WorkerHost } from '../../src/workers/host.js';
import { ECHO_HANDLER } from '../support/echo-call-handler.js';
import { storeTargets } from '../support/store-targets.js';

const handlerModule = fileURLToPath(new URL('../support/echo-call-handler.ts', import.meta.url));

/** Records everything a call reports. */
export class RecordingObserver implements CallObserver {
  readonly statuses: Doc[] = [];
  readonly events: ObservedEvent[] = [];
  readonly audio = { user: 0, assistant: 0 };
  readonly toolCalls: ToolCallRequest[][] = [];
  ended: Doc | undefined;

  onStatus(call: Doc): void {
    this.statuses.push(call);
  }
  onPipelineEvent(event: ObservedEvent): void {
    this.events.push(event);
  }
  onAudio(role: 'user' | 'assistant', samples: Int16Array): void {
    this.audio[role] += samples.length;
  }
  onToolCalls(toolCalls: readonly ToolCallRequest[]): Promise<ToolCallResult[]> {
    this.toolCalls.push([...toolCalls]);
    return Promise.resolve(
      toolCalls.map((call) => ({ toolCallId: call.id, result: `ok ${call.name}` })),
    );
  }
  onEnded(call: Doc): Promise<Doc> {
    this.ended = call;
    return Promise.resolve({ artifact: { transcript: 'recorded by the test observer' } });
  }
}

export interface WsHarness {
  store: Store;
  app: FastifyInstance;
  engine: CallEngine;
  server: WebsocketServer;
  orgId: string;
  key: string;
  wsBase: string;
  observers: Map<string, RecordingObserver>;
  post(url: string, body: unknown, headers?: Record<string, string>): Promise<[number, any]>;
  createCall(body: Doc): Promise<any>;
  stored(callId: string): Promise<Doc | null>;
}

export interface WsHarnessOptions {
  connectTimeoutMs?: number;
  backpressure?: Partial<BackpressureLimits>;
  /** The real pipeline handler instead of the echo handler. */
  pipeline?: boolean;
  /** Server-wide provider settings (evaluated when the harness starts). */
  providers?: () => Partial<ProviderServerSettings>;
}

export function useWsHarness(options: WsHarnessOptions = {}): WsHarness {
  const h = {} as WsHarness;
  let cleanup: () => Promise<void> = () => Promise.resolve();
  let host: WorkerHost | undefined;
  beforeAll(async () => {
    const target = storeTargets()[0]!;
    const opened = await target.open();
    cleanup = opened.cleanup;
    h.store = opened.store;
    h.orgId = await h.store.keys.createOrg('ws-org');
    h.key = (await h.store.keys.createKey(h.orgId, 'test')).key;
    h.observers = new Map();
    host = new WorkerHost({ threads: 1 });
    const registry: WebsocketCallRegistry = {
      claimTransport: (callId, token) => h.engine.claimTransport(callId, token),
      claimListen: (callId, token, auth) => h.engine.claimListen(callId, token, auth),
    };
    h.server = new WebsocketServer({
      registry,
      ...(options.backpressure !== undefined ? { backpressure: options.backpressure } : {}),
    });
    const port = await h.server.listen('127.0.0.1', 0);
    h.wsBase = `ws://127.0.0.1:${port}`;
    h.engine = new CallEngine({
      store: h.store,
      host,
      publicUrl: 'http://parla.test',
      wsPublicUrl: h.wsBase,
      ...(options.pipeline === true ? {} : { handlerName: ECHO_HANDLER, handlerModule }),
      connectTimeoutMs: options.connectTimeoutMs ?? 20_000,
      observerFactory: (call) => {
        const observer = new RecordingObserver();
        h.observers.set(call.id, observer);
        return observer;
      },
    });
    const builder = new CallParamsBuilder(h.store, {
      providers: {
        ...NO_PROVIDER_DEFAULTS,
        ...options.providers?.(),
      },
      vad: 'energy',
    });
    h.app = await buildApp({
      store: h.store,
      publicUrl: 'http://parla.test',
      filesDir: join(opened.dataDir, 'files'),
      callStarter: new WebsocketCallStarter(h.store, h.engine, builder),
      liveCalls: h.engine,
    });
    await h.app.ready();
  });
  afterAll(async () => {
    await h.engine?.close({ endTimeoutMs: 3000 });
    h.server?.close();
    await host?.close();
    await h.app?.close();
    await cleanup();
  });
  h.post = async (url, body, headers = { authorization: `Bearer ${h.key}` }) => {
    const response = await h.app.inject({
      method: 'POST',
      url,
      headers,
      payload: body as Record<string, unknown>,
    });
    return [response.statusCode, response.body === '' ? undefined : JSON.parse(response.body)];
  };
  h.createCall = async (body) => {
    const [status, call] = await h.post('/call', body);
    if (status !== 201) {
      throw new Error(`POST /call answered ${status}: ${JSON.stringify(call)}`);
    }
    return call;
  };
  h.stored = (callId) => h.store.resources.calls.get(h.orgId, callId);
  return h;
}

export async function waitFor(
  predicate: () => boolean,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A websocket client that records what it receives. */
export interface TestClient {
  ws: WebSocket;
  binary: Buffer[];
  texts: any[];
  closed: { code: number; reason: string } | undefined;
}

export function connect(url: string, headers: Record<string, string> = {}): Promise<TestClient> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    const client: TestClient = { ws, binary: [], texts: [], closed: undefined };
    ws.on('message', (data, isBinary) => {
      const buffer = Buffer.isBuffer(data) ? data : Buffer.concat(data as Buffer[]);
      if (isBinary) {
        client.binary.push(buffer);
      } else {
        client.texts.push(JSON.parse(buffer.toString('utf8')));
      }
    });
    ws.on('close', (code, reason) => {
      client.closed = { code, reason: reason.toString() };
    });
    ws.once('open', () => resolve(client));
    ws.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () =>
        reject(
          Object.assign(new Error(`refused ${response.statusCode}`), {
            statusCode: response.statusCode,
            body,
          }),
        ),
      );
    });
    ws.once('error', reject);
  });
}

/** The HTTP status of a refused upgrade (fails if the upgrade succeeds). */
export async function refusedStatus(
  url: string,
  headers: Record<string, string> = {},
): Promise<[number, any]> {
  try {
    const client = await connect(url, headers);
    client.ws.close();
  } catch (error) {
    const { statusCode, body } = error as { statusCode?: number; body?: string };
    if (statusCode !== undefined) {
      return [statusCode, body === undefined || body === '' ? undefined : JSON.parse(body)];
    }
    throw error;
  }
  throw new Error(`upgrade to ${url} was accepted`);
}
