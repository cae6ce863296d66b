/**
 * `--self`: a Parla of the harness's own, with no setup. Two child processes: the vendor
 * simulators (self-vendors.ts) and Parla itself (self-server.ts: src/main.ts's composition) on a
 * fresh embedded store in a temporary folder, its provider endpoints pointed at the simulators.
 * An assistant on those providers is created through the API, with a SIP trunk (gateway
 * 127.0.0.1) and a number routed to it for SIP calls. `close()` stops both children
 * (by their pids) and removes the folder.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { HarnessError } from './caller-transport.js';
import type { VendorEndpoints, VendorSettings } from './self-vendors.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const START_TIMEOUT_MS = 180_000;
/** The VAD's stop hold (VadStateMachine.stopMs): the transcriber is finalised only after it. */
export const VAD_STOP_HOLD_MS = 500;

export interface SelfParlaOptions extends VendorSettings {
  /** Worker threads (0: one per core). */
  readonly threads: number;
  readonly vad: 'silero' | 'energy';
}

export interface SelfParla {
  readonly url: string;
  readonly apiKey: string;
  readonly assistantId: string;
  /** Parla's SIP port (UDP, on 127.0.0.1) and the number routed to the assistant. */
  readonly sip: { readonly host: string; readonly port: number; readonly number: string };
  /** The `byo-phone-number` of `sip.number` (the SIP caller finds its stored calls by it). */
  readonly phoneNumberId: string;
  /** Parla's process, for CPU and memory sampling. */
  readonly pid: number;
  /** The vendor simulators' process (its CPU tells whether they kept up). */
  readonly vendorsPid: number;
  /**
   * The latency the scenario adds on purpose on every answered turn: the VAD stop hold, then the
   * transcriber's, the model's and the voice's configured latencies (means). Endpointing waits
   * are 0.
   */
  readonly expectedMs: number;
  close(): Promise<void>;
}

/** The number SIP callers dial. */
export const SELF_NUMBER = '+15550100';

/** The assistant every self call talks to. */
export const SELF_ASSISTANT = {
  name: 'Latency bench',
  firstMessage: 'Hello, thanks for calling. How can I help?',
  model: {
    provider: 'openai',
    model: 'gpt-4o-mini',
    messages: [{ role: 'system', content: 'You are a receptionist.' }],
  },
  transcriber: { provider: 'deepgram', model: 'nova-2' },
  voice: { provider: '11labs', voiceId: 'bench-voice' },
  startSpeakingPlan: {
    waitSeconds: 0,
    transcriptionEndpointingPlan: {
      onPunctuationSeconds: 0,
      onNoPunctuationSeconds: 0,
      onNumberSeconds: 0,
    },
  },
  silenceTimeoutSeconds: 600,
  maxDurationSeconds: 3600,
};

/**
 * The mean simulated latency of an answered turn: the VAD hold, then the three vendors in series,
 * each its configured latency plus a uniform 0..jitterMs (mean jitterMs / 2).
 */
export function expectedLatencyMs(settings: VendorSettings): number {
  return (
    VAD_STOP_HOLD_MS +
    settings.transcriberMs +
    settings.modelMs +
    (settings.voiceMs ?? 0) +
    1.5 * settings.jitterMs
  );
}

export async function startSelfParla(options: SelfParlaOptions): Promise<SelfParla> {
  const dataDir = await mkdtemp(join(tmpdir(), 'parla-bench-'));
  const children: ChildProcess[] = [];
  const close = async (): Promise<void> => {
    await Promise.all(children.map((child) => stop(child)));
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    const settings: VendorSettings = {
      transcriberMs: options.transcriberMs,
      modelMs: options.modelMs,
      voiceMs: options.voiceMs ?? 0,
      jitterMs: options.jitterMs,
    };
    const vendorsChild = tsx(['bench/harness/self-vendors.ts', JSON.stringify(settings)], {});
    children.push(vendorsChild);
    const vendors = JSON.parse(
      await lineMatching(vendorsChild, (line) => line.startsWith('{'), 'vendor simulators'),
    ) as VendorEndpoints;
    const [port, wsPort, sipPort] = [await freePort(), await freePort(), await freePort()];
    // 1,000 RTP port pairs at a random base, away from other runs on the machine.
    const rtpPortMin = 20_000 + 2 * randomInt(0, 10_000);
    const apiKey = `parla_bench_${randomBytes(24).toString('hex')}`;
    const parla = tsx(['bench/harness/self-server.ts'], {
      PARLA_HOST: '127.0.0.1',
      PARLA_PORT: String(port),
      PARLA_WS_PORT: String(wsPort),
      PARLA_SIP_PORT: String(sipPort),
      PARLA_RTP_PORT_MIN: String(rtpPortMin),
      PARLA_RTP_PORT_MAX: String(rtpPortMin + 1999),
      PARLA_DATA_DIR: dataDir,
      PARLA_API_KEY: apiKey,
      PARLA_LOG_LEVEL: 'silent',
      PARLA_WORKER_THREADS: String(options.threads),
      // The watchdog waits 30 s, not 2: see self-server.ts.
      PARLA_WORKER_HEARTBEAT_TIMEOUT_MS: '30000',
      PARLA_VAD: options.vad,
      PARLA_OPENAI_BASE_URL: vendors.openai.url,
      OPENAI_API_KEY: vendors.openai.apiKey,
      PARLA_DEEPGRAM_BASE_URL: vendors.deepgram.url,
      DEEPGRAM_API_KEY: vendors.deepgram.apiKey,
      PARLA_ELEVENLABS_BASE_URL: vendors.elevenLabs.url,
      ELEVENLABS_API_KEY: vendors.elevenLabs.apiKey,
    });
    children.push(parla);
    await lineMatching(parla, (line) => line.startsWith('Websocket calls on'), 'Parla');
    const url = `http://127.0.0.1:${port}`;
    const create = (path: string, body: unknown): Promise<string> =>
      createdId(url, apiKey, path, body);
    const assistantId = await create('/assistant', SELF_ASSISTANT);
    // SIP calls: a trunk whose gateway is this machine and a number on it routed to the assistant.
    const credentialId = await create('/credential', {
      provider: 'byo-sip-trunk',
      gateways: [{ ip: '127.0.0.1' }],
    });
    const phoneNumberId = await create('/phone-number', {
      provider: 'byo-phone-number',
      number: SELF_NUMBER,
      credentialId,
      assistantId,
    });
    return {
      url,
      apiKey,
      assistantId,
      sip: { host: '127.0.0.1', port: sipPort, number: SELF_NUMBER },
      phoneNumberId,
      pid: parla.pid!,
      vendorsPid: vendorsChild.pid!,
      expectedMs: expectedLatencyMs(options),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** POSTs `body` and returns the created resource's id. */
async function createdId(
  url: string,
  apiKey: string,
  path: string,
  body: unknown,
): Promise<string> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const created = (await response.json().catch(() => null)) as { id?: unknown } | null;
  if (response.status !== 201 || typeof created?.id !== 'string') {
    throw new HarnessError(
      'ERR_BENCH_CONNECT',
      `POST ${path} answered ${response.status}: ${JSON.stringify(created)}`,
    );
  }
  return created.id;
}

function tsx(args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // Whatever the child prints after its ready line is read and dropped.
  child.stdout?.resume();
  return child;
}

function lineMatching(
  child: ChildProcess,
  match: (line: string) => boolean,
  what: string,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => {
      reject(
        new HarnessError(
          'ERR_BENCH_CONNECT',
          `${what} did not start within ${START_TIMEOUT_MS / 1000} s`,
        ),
      );
    }, START_TIMEOUT_MS);
    lines.on('line', (line) => {
      if (match(line)) {
        clearTimeout(timer);
        resolve(line);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new HarnessError('ERR_BENCH_CONNECT', `${what} exited (code ${code}) while starting`));
    });
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return;
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
