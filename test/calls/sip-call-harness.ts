/**
 * A real SIP call stack for tests: store (embedded), worker host (one thread; the echo handler or
 * the voice pipeline), call engine, the SIP server on a free port of 127.0.0.1 (UDP and TCP) with RTP in a
 * range of its own, and the control plane (inject()) to create assistants, trunks and numbers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import { CallEngine } from '../../src/calls/call-engine.js';
import { CallParamsBuilder } from '../../src/calls/call-params-builder.js';
import {
  NO_PROVIDER_DEFAULTS,
  type ProviderServerSettings,
} from '../../src/calls/pipeline-call-params.js';
import { PhoneCallStarter } from '../../src/calls/phone-call-starter.js';
import { SipServer, type SipServerOptions } from '../../src/calls/sip-server.js';
import { WebsocketCallStarter } from '../../src/calls/websocket-call-starter.js';
import { buildApp } from '../../src/control/app.js';
import type { Doc } from '../../src/store/resource-store.js';
import type { Store } from '../../src/store/store.js';
import { WorkerHost } from '../../src/workers/host.js';
import { ECHO_HANDLER } from '../support/echo-call-handler.js';
import { storeTargets } from '../support/store-targets.js';
import { RecordingObserver } from './websocket-call-harness.js';
import { runSipp } from '../support/sipp.js';

const handlerModule = fileURLToPath(new URL('../support/echo-call-handler.ts', import.meta.url));
export const SIPP_SCENARIOS = fileURLToPath(new URL('../fixtures/sip/sipp/', import.meta.url));

/** Sums the absolute sample values each side sent, beside what RecordingObserver keeps. */
export class EnergyObserver extends RecordingObserver {
  readonly energy = { user: 0, assistant: 0 };
  override onAudio(role: 'user' | 'assistant', samples: Int16Array): void {
    super.onAudio(role, samples);
    let sum = 0;
    for (const sample of samples) {
      sum += Math.abs(sample);
    }
    this.energy[role] += sum;
  }
}

export interface SipHarness {
  store: Store;
  app: FastifyInstance;
  engine: CallEngine;
  sip: SipServer;
  orgId: string;
  key: string;
  observers: Map<string, EnergyObserver>;
  post(url: string, body: unknown): Promise<[number, any]>;
  /** A trunk allowing `gatewayIp` and a number on it routed to a new assistant. */
  phoneNumber(options: {
    number: string;
    gatewayIp?: string;
    assistant?: Doc | null;
  }): Promise<{ phoneNumberId: string; assistantId?: string }>;
  callsOf(phoneNumberId: string): Promise<Doc[]>;
  /**
   * A trunk whose outbound gateway is `127.0.0.1:port` (with `trunk` fields merged in) and a
   * number on it, for outbound calls; the assistant (echo handler) is created too.
   */
  outboundNumber(options: {
    port: number;
    number?: string;
    trunk?: Doc;
    assistant?: Doc;
  }): Promise<{ phoneNumberId: string; assistantId: string; credentialId: string }>;
}

export interface SipHarnessOptions {
  /** The real pipeline handler instead of the echo handler. */
  pipeline?: boolean;
  providers?: () => Partial<ProviderServerSettings>;
  rtpInactivityTimeoutMs?: number;
  /** Wraps the params builder (tests hold a call in set-up). */
  builder?: (builder: CallParamsBuilder) => CallParamsBuilder;
  ringTimeoutMs?: number;
  registrations?: SipServerOptions['registrations'];
}

/** A range of 200 RTP ports per test file, chosen at random to keep parallel runs apart. */
function rtpRange(): { rtpPortMin: number; rtpPortMax: number } {
  const base = 42_000 + 200 * Math.floor(Math.random() * 40);
  return { rtpPortMin: base, rtpPortMax: base + 199 };
}

export function useSipHarness(options: SipHarnessOptions = {}): SipHarness {
  const h = {} as SipHarness;
  let cleanup: () => Promise<void> = () => Promise.resolve();
  let host: WorkerHost | undefined;
  beforeAll(async () => {
    const target = storeTargets()[0]!;
    const opened = await target.open();
    cleanup = opened.cleanup;
    h.store = opened.store;
    h.orgId = await h.store.keys.createOrg('sip-org');
    h.key = (await h.store.keys.createKey(h.orgId, 'test')).key;
    h.observers = new Map();
    host = new WorkerHost({ threads: 1 });
    h.engine = new CallEngine({
      store: h.store,
      host,
      publicUrl: 'http://parla.test',
      wsPublicUrl: 'ws://parla.test',
      ...(options.pipeline === true ? {} : { handlerName: ECHO_HANDLER, handlerModule }),
      observerFactory: (call) => {
        const observer = new EnergyObserver();
        h.observers.set(call.id, observer);
        return observer;
      },
    });
    const base = new CallParamsBuilder(h.store, {
      providers: {
        ...NO_PROVIDER_DEFAULTS,
        ...options.providers?.(),
      },
      vad: 'energy',
    });
    const builder = options.builder?.(base) ?? base;
    h.sip = await SipServer.start({
      store: h.store,
      engine: h.engine,
      builder,
      host: '127.0.0.1',
      sipPort: 0,
      ...rtpRange(),
      ...(options.rtpInactivityTimeoutMs !== undefined && {
        rtpInactivityTimeoutMs: options.rtpInactivityTimeoutMs,
      }),
      ...(options.ringTimeoutMs !== undefined && { ringTimeoutMs: options.ringTimeoutMs }),
      ...(options.registrations !== undefined && { registrations: options.registrations }),
      log: () => {},
    });
    h.app = await buildApp({
      store: h.store,
      publicUrl: 'http://parla.test',
      filesDir: join(opened.dataDir, 'files'),
      callStarter: new PhoneCallStarter(
        h.sip.outbound,
        new WebsocketCallStarter(h.store, h.engine, builder),
      ),
      liveCalls: h.engine,
    });
    await h.app.ready();
  });
  afterAll(async () => {
    await h.engine?.close({ endTimeoutMs: 3000 });
    await h.sip?.close();
    await host?.close();
    await h.app?.close();
    await cleanup();
  });
  h.post = async (url, body) => {
    const response = await h.app.inject({
      method: 'POST',
      url,
      headers: { authorization: `Bearer ${h.key}` },
      payload: body as Record<string, unknown>,
    });
    return [response.statusCode, response.body === '' ? undefined : JSON.parse(response.body)];
  };
  h.phoneNumber = async ({ number, gatewayIp = '127.0.0.1', assistant }) => {
    const [trunkStatus, trunk] = await h.post('/credential', {
      provider: 'byo-sip-trunk',
      gateways: [{ ip: gatewayIp }],
    });
    if (trunkStatus !== 201) {
      throw new Error(`POST /credential answered ${trunkStatus}: ${JSON.stringify(trunk)}`);
    }
    let assistantId: string | undefined;
    if (assistant !== null) {
      const [, created] = await h.post('/assistant', {
        name: 'SIP test',
        metadata: { echoMode: 'echo' },
        ...assistant,
      });
      assistantId = created.id as string;
    }
    const [status, phoneNumber] = await h.post('/phone-number', {
      provider: 'byo-phone-number',
      number,
      credentialId: trunk.id,
      ...(assistantId !== undefined && { assistantId }),
    });
    if (status !== 201) {
      throw new Error(`POST /phone-number answered ${status}: ${JSON.stringify(phoneNumber)}`);
    }
    return { phoneNumberId: phoneNumber.id as string, ...(assistantId && { assistantId }) };
  };
  h.outboundNumber = async ({ port, number = '+15550100000', trunk = {}, assistant = {} }) => {
    const [trunkStatus, credential] = await h.post('/credential', {
      provider: 'byo-sip-trunk',
      gateways: [{ ip: '127.0.0.1', port, inboundEnabled: false }],
      ...trunk,
    });
    if (trunkStatus !== 201) {
      throw new Error(`POST /credential answered ${trunkStatus}: ${JSON.stringify(credential)}`);
    }
    const [, created] = await h.post('/assistant', {
      name: 'SIP outbound test',
      metadata: { echoMode: 'echo' },
      ...assistant,
    });
    const [status, phoneNumber] = await h.post('/phone-number', {
      provider: 'byo-phone-number',
      number,
      numberE164CheckEnabled: false,
      credentialId: credential.id,
    });
    if (status !== 201) {
      throw new Error(`POST /phone-number answered ${status}: ${JSON.stringify(phoneNumber)}`);
    }
    return {
      phoneNumberId: phoneNumber.id as string,
      assistantId: created.id as string,
      credentialId: credential.id as string,
    };
  };
  h.callsOf = (phoneNumberId) =>
    h.store.resources.calls.list(h.orgId, { limit: 10, equals: { phoneNumberId } });
  return h;
}

/** SIPp arguments for a UAC scenario against the harness's SIP server. */
export function sippArgs(h: SipHarness, scenario: string, extra: readonly string[] = []): string[] {
  return [
    `127.0.0.1:${h.sip.port}`,
    '-sf',
    join(SIPP_SCENARIOS, scenario),
    '-i',
    '127.0.0.1',
    '-p',
    '0',
    '-m',
    '1',
    '-timeout',
    '30s',
    '-timeout_error',
    '-nostdin',
    ...extra,
  ];
}

/** A PCMU packet of `ssrc` whose 160 payload bytes are all `value`. */
export function pcmuPacket(seq: number, value: number, ssrc = 0x0badcafe): Buffer {
  const packet = Buffer.alloc(12 + 160, value);
  packet[0] = 0x80;
  packet[1] = 0; // PCMU
  packet.writeUInt16BE(seq & 0xffff, 2);
  packet.writeUInt32BE((seq * 160) >>> 0, 4);
  packet.writeUInt32BE(ssrc, 8);
  return packet;
}

/** A UDP socket standing in for the caller's RTP endpoint. */
export async function rtpPeer(): Promise<{ socket: Socket; port: number; packets: Buffer[] }> {
  const socket = createSocket('udp4');
  const packets: Buffer[] = [];
  socket.on('message', (data) => packets.push(data));
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { socket, port: socket.address().port, packets };
}

/** A UDP port free a moment ago (SIPp binds it next; our Timer A covers a late bind). */
export async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const port = socket.address().port;
  await new Promise<void>((resolve) => socket.close(resolve));
  return port;
}

/** An even RTP port for SIPp (-mp) away from the harness's own range. */
export function sippMediaPort(): number {
  return 30_000 + 2 * Math.floor(Math.random() * 4000);
}

/**
 * Starts SIPp as a one-call UAS (the far end of an outbound call, or a registrar) on
 * 127.0.0.1:`port`; resolves with its exit code and the end of its output when it ends.
 */
export function startSippUas(
  scenario: string,
  port: number,
  extra: readonly string[] = [],
): { child: ChildProcess; exited: Promise<{ code: number | null; output: string }> } {
  const child = spawn(
    'sipp',
    [
      '-sf',
      join(SIPP_SCENARIOS, scenario),
      '-i',
      '127.0.0.1',
      '-p',
      String(port),
      '-m',
      '1',
      '-nostdin',
      '-timeout',
      '30s',
      '-timeout_error',
      ...extra,
    ],
    { cwd: tmpdir(), env: { ...process.env, TERM: 'dumb' } },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; output: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, output: output.slice(-4000) })),
  );
  return { child, exited };
}

/**
 * SIPp placing `calls` calls of `scenario` to `number` at once (started at 50 per second, none
 * ended before the last starts), sampling the server's peak of live inbound calls meanwhile.
 */
export async function runParallelSipp(
  h: SipHarness,
  scenario: string,
  number: string,
  calls: number,
): Promise<{ code: number | null; output: string; peakLiveCalls: number }> {
  let peakLiveCalls = 0;
  const sampler = setInterval(() => {
    peakLiveCalls = Math.max(peakLiveCalls, h.sip.calls.liveCalls);
  }, 20);
  const args = [
    `127.0.0.1:${h.sip.port}`,
    '-sf',
    join(SIPP_SCENARIOS, scenario),
    '-s',
    number,
    '-i',
    '127.0.0.1',
    '-p',
    '0',
    '-mp',
    String(sippMediaPort()),
    '-m',
    String(calls),
    '-l',
    String(calls),
    '-r',
    '50',
    '-timeout',
    '150s',
    '-timeout_error',
    '-nostdin',
  ];
  const result = await runSipp(args, tmpdir()).finally(() => clearInterval(sampler));
  return { ...result, peakLiveCalls };
}

/** Waits until `count` calls of the number are stored ended and reported; returns them all. */
export async function endedCallsOf(
  h: SipHarness,
  phoneNumberId: string,
  count: number,
  timeoutMs: number,
): Promise<Doc[]> {
  let calls: Doc[] = [];
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    calls = await h.store.resources.calls.list(h.orgId, { limit: 1000, equals: { phoneNumberId } });
    const reported = calls.filter(
      (call) => call.status === 'ended' && h.observers.get(String(call.id))?.ended !== undefined,
    );
    if (calls.length === count && reported.length === count) {
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return calls;
}
