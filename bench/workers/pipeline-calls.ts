/**
 * `npm run bench -- pipeline-calls [--runs 1x1,1x10,1x50,1x100,2x200] [--seconds 30]`
 *
 * A WorkerHost running N concurrent voice-pipeline calls (the real pipeline call handler, Silero
 * VAD batched per worker tick, denoising off) on T threads; each run is `THREADSxCALLS`. Every
 * call streams a looping speech WAV (7 s of speech, 2 s of silence, a random start in the loop)
 * in real time, 20 ms frames at 16 kHz from the main thread, as a transport would. The vendors are
 * in-process fakes in the worker with fixed latencies (fake-vendors.ts).
 *
 * Reported per run, over the measurement window after a warm-up:
 * - CPU per call: process CPU time (every thread: main, workers, onnxruntime) over wall time,
 *   less the idle process's, divided by N, in % of one core; and the worker threads' event-loop
 *   busy share per call.
 * - Media clock: late ticks (> 5 ms after their deadline), missed 20 ms deadlines, worst lateness.
 * - Added latency per turn: voice-to-voice (the caller's speech end → first assistant frame out,
 *   from the pipeline's `metrics` events) minus the fixed waits and fake latencies on that path:
 *   the VAD's 500 ms stop hold (which hides the fake transcriber's 150 ms), the model's first
 *   token (200 ms) and the voice's first byte (100 ms); startSpeakingPlan waits are 0.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import {
  NO_PROVIDER_DEFAULTS,
  type PipelineCallParams,
} from '../../src/calls/pipeline-call-params.js';
import { readWav } from '../../src/media/codecs/wav.js';
import type { CallChannel } from '../../src/workers/call-channel.js';
import { WorkerHost } from '../../src/workers/host.js';
import type { HeartbeatMessage, MediaClockStats } from '../../src/workers/protocol.js';
import { BENCH_PIPELINE_HANDLER } from './bench-call-handlers.js';
import { MODEL_FIRST_TOKEN_MS, VOICE_FIRST_BYTE_MS } from './fake-vendors.js';

const RATE_HZ = 16000;
const FRAME_SAMPLES = 320;
const FRAME_MS = 20;
const VAD_STOP_HOLD_MS = 500;
const FIXED_PATH_MS = VAD_STOP_HOLD_MS + MODEL_FIRST_TOKEN_MS + VOICE_FIRST_BYTE_MS;
/** After every call started: one loop of the WAV, so every call had a turn and all code is warm. */
const WARMUP_MS = 10_000;
const HANDLER_MODULE = new URL('./bench-call-handlers.ts', import.meta.url).href;

function option(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? (process.argv[index + 1] ?? fallback) : fallback;
}

const runs = option('runs', '1x1,1x10,1x50,1x100,2x200')
  .split(',')
  .map((spec) => {
    const [threads, calls] = spec.split('x').map(Number);
    if (!Number.isInteger(threads) || !Number.isInteger(calls)) {
      throw new Error(`bad run "${spec}": expected THREADSxCALLS`);
    }
    return { threads: threads!, calls: calls! };
  });
const measureMs = Number(option('seconds', '30')) * 1000;
const vad = option('vad', 'silero') === 'energy' ? 'energy' : 'silero';
if (process.argv.includes('--main-ort')) {
  // Experiment: create an ONNX session in the main thread before any worker does.
  const { SileroModel } = await import('../../src/pipeline/vad/silero-model.js');
  await SileroModel.shared();
}

const speech = readWav(
  readFileSync(new URL('../../test/fixtures/denoise/clean-speech-16k.wav', import.meta.url)),
).samples;
const loop = new Int16Array(speech.length + 2 * RATE_HZ);
loop.set(speech);
const loopFrames = Math.floor(loop.length / FRAME_SAMPLES);

const round1 = (value: number): number => Math.round(value * 10) / 10;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(values: number[], p: number): number {
  if (values.length === 0) {
    return Number.NaN;
  }
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function params(callId: string): PipelineCallParams {
  return {
    callId,
    orgId: 'bench',
    assistant: {
      firstMessageMode: 'assistant-waits-for-user',
      model: { provider: 'openai', model: 'fake' },
      transcriber: { provider: 'deepgram' },
      voice: { provider: '11labs', voiceId: 'fake' },
      startSpeakingPlan: {
        waitSeconds: 0,
        transcriptionEndpointingPlan: {
          onPunctuationSeconds: 0,
          onNoPunctuationSeconds: 0,
          onNumberSeconds: 0,
        },
      },
      silenceTimeoutSeconds: 3600,
      maxDurationSeconds: 3600,
    },
    variableValues: {},
    credentials: {},
    providers: {
      ...NO_PROVIDER_DEFAULTS,
    },
    transportSampleRateHz: RATE_HZ,
    vad,
  };
}

/** The pipeline's per-turn latency (src/pipeline/metrics/turn-metrics.ts), as the bench reads it. */
interface TurnLatency {
  voiceToVoiceMs: number;
  vadStopMs: number | null;
  toModelRequestMs: number | null;
  toVoiceFirstByteMs: number | null;
}

interface Turn {
  atMs: number;
  latency: TurnLatency;
}

/**
 * Parla's share of each stage of a turn, in ms: what each took beyond the fixed waits and fake
 * latencies on it. Their sum is the added latency.
 */
const STAGES = {
  /** Speech end → the VAD's stop decision, less the 500 ms hold (window rounding, scoring lag). */
  vadStop: (l: TurnLatency) => sub(l.vadStopMs, VAD_STOP_HOLD_MS),
  /** Stop decision → end-of-turn decision → model request (waits are 0: one step here). */
  endOfTurn: (l: TurnLatency) => diff(l.toModelRequestMs, l.vadStopMs),
  /** Model request → first voice audio, less the fake model's and voice's latencies. */
  modelAndVoice: (l: TurnLatency) =>
    sub(diff(l.toVoiceFirstByteMs, l.toModelRequestMs), MODEL_FIRST_TOKEN_MS + VOICE_FIRST_BYTE_MS),
  /** First voice audio → first assistant frame out. */
  firstFrameOut: (l: TurnLatency) => diff(l.voiceToVoiceMs, l.toVoiceFirstByteMs),
};

function diff(a: number | null, b: number | null): number | null {
  return a === null || b === null ? null : a - b;
}

function sub(a: number | null, b: number): number | null {
  return a === null ? null : a - b;
}

interface Call {
  channel: CallChannel;
  frame: number;
  framesOut: number;
  turns: Turn[];
  interruptions: number;
}

/** Cumulative figures of every thread's latest heartbeat. */
function threadTotals(host: WorkerHost): {
  clock: MediaClockStats;
  busy: number;
  silero: unknown[];
} {
  const clock: MediaClockStats = { ticks: 0, lateTicks: 0, missedDeadlines: 0, maxLateMs: 0 };
  let busy = 0;
  const silero: unknown[] = [];
  for (const thread of host.threadStats()) {
    const beat: HeartbeatMessage | undefined = thread.heartbeat;
    if (beat === undefined) {
      continue;
    }
    clock.ticks += beat.clock.ticks;
    clock.lateTicks += beat.clock.lateTicks;
    clock.missedDeadlines += beat.clock.missedDeadlines;
    clock.maxLateMs = Math.max(clock.maxLateMs, beat.clock.maxLateMs);
    busy += beat.eventLoopUtilization;
    silero.push(beat.stats.silero);
  }
  return { clock, busy, silero };
}

/** Process CPU share with the host's threads up and no calls. */
async function idleCpuShare(): Promise<number> {
  await sleep(1000);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await sleep(3000);
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / 1000 / (performance.now() - t0);
}

async function run(host: WorkerHost, threads: number, callCount: number, idleShare: number) {
  const calls: Call[] = [];
  for (let i = 0; i < callCount; i++) {
    const channel = host.startCall(`bench-${i}`, BENCH_PIPELINE_HANDLER, {
      handlerModule: HANDLER_MODULE,
      sampleRateHz: RATE_HZ,
      params: params(`bench-${i}`),
    });
    const call: Call = {
      channel,
      frame: Math.floor(Math.random() * loopFrames),
      framesOut: 0,
      turns: [],
      interruptions: 0,
    };
    channel.on('audio', () => {
      call.framesOut += 1;
    });
    channel.on('event', (name, data) => {
      if (name === 'metrics') {
        const { latency } = data as { latency: TurnLatency };
        call.turns.push({ atMs: performance.now(), latency });
      } else if (name === 'user-interrupted') {
        call.interruptions += 1;
      }
    });
    calls.push(call);
  }

  // Loading the handler module in the thread (tsx compiles it when run from sources) takes seconds.
  // (The pool's threads do not keep the process alive: the ref'd timeout does, and bounds the wait.)
  let startTimeout: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(
      calls.map(
        (call) =>
          new Promise<void>((resolve, reject) => {
            call.channel.once('started', () => resolve());
            call.channel.once('ended', (reason) => reject(new Error(`a call ended: ${reason}`)));
          }),
      ),
    ),
    new Promise<never>((_resolve, reject) => {
      startTimeout = setTimeout(() => reject(new Error('calls did not start in 120 s')), 120_000);
    }),
  ]);
  clearTimeout(startTimeout);

  // The transport side: one frame per call every 20 ms, drift-corrected.
  let sending = true;
  const startMs = performance.now();
  let tick = 0;
  const sendLoop = async (): Promise<void> => {
    while (sending) {
      for (const call of calls) {
        const start = call.frame * FRAME_SAMPLES;
        call.channel.sendAudio(loop.slice(start, start + FRAME_SAMPLES));
        call.frame = (call.frame + 1) % loopFrames;
      }
      tick += 1;
      await sleep(Math.max(0, startMs + tick * FRAME_MS - performance.now()));
    }
  };
  const sender = sendLoop();

  await sleep(WARMUP_MS);
  const before = threadTotals(host);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const busySamples: number[] = [];
  while (performance.now() - t0 < measureMs) {
    await sleep(1000);
    busySamples.push(threadTotals(host).busy);
  }
  const cpu = process.cpuUsage(cpu0);
  const wallMs = performance.now() - t0;
  const after = threadTotals(host);
  sending = false;
  await sender;
  for (const call of calls) {
    call.channel.end('customer-ended-call');
  }
  await Promise.all(calls.map((call) => call.channel.ended));

  const cpuShare = (cpu.user + cpu.system) / 1000 / wallMs;
  const turns = calls.flatMap((call) =>
    call.turns.filter((t) => t.atMs >= t0 && t.atMs <= t0 + wallMs),
  );
  const added = turns.map((t) => t.latency.voiceToVoiceMs - FIXED_PATH_MS);
  const stages: Record<string, { p50: number; p99: number }> = {};
  for (const [name, stage] of Object.entries(STAGES)) {
    const values = turns.map((t) => stage(t.latency)).filter((v): v is number => v !== null);
    stages[name] = { p50: round1(percentile(values, 50)), p99: round1(percentile(values, 99)) };
  }
  const busyPerThread = busySamples.reduce((a, b) => a + b, 0) / busySamples.length / threads;
  return {
    threads,
    calls: callCount,
    seconds: Math.round(wallMs / 1000),
    cpuPercentPerCall: ((cpuShare - idleShare) * 100) / callCount,
    processCpuPercent: cpuShare * 100,
    workerBusyPercentPerCall: (busyPerThread * threads * 100) / callCount,
    workerBusyPercent: busyPerThread * 100,
    ticks: after.clock.ticks - before.clock.ticks,
    lateTicks: after.clock.lateTicks - before.clock.lateTicks,
    missedDeadlines: after.clock.missedDeadlines - before.clock.missedDeadlines,
    maxLateMs: after.clock.maxLateMs,
    turns: turns.length,
    interruptions: calls.reduce((n, call) => n + call.interruptions, 0),
    framesOutPerCall: calls.reduce((n, call) => n + call.framesOut, 0) / callCount,
    voiceToVoiceP50Ms: percentile(
      turns.map((t) => t.latency.voiceToVoiceMs),
      50,
    ),
    stages,
    addedP50Ms: percentile(added, 50),
    addedP99Ms: percentile(added, 99),
    addedMaxMs: percentile(added, 100),
    /** The machine's 1-minute load average at the end: other processes compete for the cores. */
    loadAverage: loadavg()[0] ?? 0,
    silero: after.silero,
  };
}

console.log(
  `# pipeline-calls: ${cpus()[0]?.model ?? 'cpu'}, ${availableParallelism()} cores, Node ${process.version}`,
);
console.log(`fixed path subtracted: ${FIXED_PATH_MS} ms; measurement ${measureMs / 1000} s\n`);
// One host per thread count, kept for every run, closed at the end (threads free their ONNX
// sessions before they are stopped: see WorkerHost.close).
const hosts = new Map<number, { host: WorkerHost; idleShare: number }>();
const results = [];
for (const { threads, calls } of runs) {
  let entry = hosts.get(threads);
  if (entry === undefined) {
    // Starting 100 calls at once can keep a thread busy for seconds on a loaded machine (each
    // builds its pipeline): the benchmark measures calls, not stall detection.
    const host = new WorkerHost({ threads, heartbeatIntervalMs: 500, heartbeatTimeoutMs: 30_000 });
    entry = { host, idleShare: await idleCpuShare() };
    hosts.set(threads, entry);
  }
  const result = await run(entry.host, threads, calls, entry.idleShare);
  results.push(result);
  console.log(JSON.stringify(result));
}

const fmt = (value: number, digits = 2): string =>
  Number.isFinite(value) ? value.toFixed(digits) : '–';
console.log(
  '\n| threads × calls | CPU % of a core per call | worker loop busy % per call | late ticks / ticks | missed deadlines | worst late ms | turns | added latency p50 / p99 / max ms | load average |',
);
console.log('|---|---|---|---|---|---|---|---|---|');
for (const r of results) {
  console.log(
    `| ${r.threads} × ${r.calls} | ${fmt(r.cpuPercentPerCall)} | ${fmt(r.workerBusyPercentPerCall)} | ` +
      `${r.lateTicks} / ${r.ticks} | ${r.missedDeadlines} | ${fmt(r.maxLateMs, 1)} | ${r.turns} | ` +
      `${fmt(r.addedP50Ms, 1)} / ${fmt(r.addedP99Ms, 1)} / ${fmt(r.addedMaxMs, 1)} | ` +
      `${fmt(r.loadAverage, 1)} |`,
  );
}
console.log("\nParla's share of each stage, p50 / p99 ms (see STAGES):\n");
console.log(`| threads × calls | ${Object.keys(STAGES).join(' | ')} |`);
console.log(
  `|---|${Object.keys(STAGES)
    .map(() => '---|')
    .join('')}`,
);
for (const r of results) {
  const cells = Object.values(r.stages).map((s) => `${fmt(s.p50, 1)} / ${fmt(s.p99, 1)}`);
  console.log(`| ${r.threads} × ${r.calls} | ${cells.join(' | ')} |`);
}
for (const { host } of hosts.values()) {
  await host.close();
}
process.exit(0);
