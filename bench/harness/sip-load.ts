/**
 * `npm run bench -- sip-load`: concurrent SIP calls from SIPp at a steady call rate through a
 * Parla of the harness's own (self-parla.ts: vendor simulators, one worker thread by default).
 * SIPp places `--rate` calls a second, each playing the caller's speech (caller-pcap.ts) for
 * `--call-seconds`, for `--duration` seconds; once the load is steady (one call length after the
 * start), the harness's own SIP callers place `--probes` scripted calls on top, which measure
 * voice-to-voice latency and the arrival jitter of Parla's RTP. Over the steady window it samples
 * Parla's CPU (calls per core); afterwards it reads Parla's per-turn timings of the SIPp calls.
 * See docs/benchmarks.md, "SIP load from SIPp".
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { buildCallerPcap } from './caller-pcap.js';
import { HarnessError } from './caller-transport.js';
import { integerArg, loadScripts, numberArg, runEntry } from './cli-values.js';
import { describeMachine, ProcessSampler, type ProcessUsage } from './machine.js';
import { summarize } from './result-file.js';
import type { RunResult } from './runner.js';
import { startSelfParla, type SelfParla } from './self-parla.js';
import {
  SIP_LOAD_FORMAT,
  sipLoadText,
  stageDistributions,
  type SipLoadResult,
} from './sip-load-result.js';
import { runSipProbes } from './sip-probes.js';
import { SIP_SAMPLE_RATE_HZ, type SipCallerTransport } from './sip-transport.js';
import { sippAvailable, startSippLoad, type SippLoad, type SippOutcome } from './sipp-runner.js';
import { distribution } from './stats.js';
import { readStoredCalls } from './stored-calls.js';

const USAGE = `usage: npm run bench -- sip-load [options]
  --rate <calls/s>          SIPp's steady call rate (default 1; may be fractional)
  --concurrent <n>          instead of --rate: SIPp calls open in the steady state
                            (rate = n ÷ call length)
  --call-seconds <s>        how long each SIPp call is held after its ACK (default 30)
  --duration <s>            how long SIPp places calls (default: the call length + 75 s); the
                            steady window runs from one call length after the start to its end
  --probes <n>              scripted calls of the harness's own placed once the load is steady
                            (default 3; 0: none)
  --scripts <a,b>           probe scripts (default: all in bench/fixtures/callers)
  --threads <n>             Parla's worker threads (default 1; 0: one per core)
  --vad <silero|energy>     Parla's VAD (default silero)
  --transcriber-ms <ms>     the transcriber's latency after end of speech (default 150)
  --model-ms <ms>           the model's first-token latency (default 200)
  --voice-ms <ms>           the voice's time to first audio byte (default 0)
  --vendor-jitter-ms <ms>   each of those three plus uniform 0..this (default 0)
  --label <text>            names the run
  --out <file.json>         result file (default bench/results/sip-load-<time>.json)`;

const options = {
  rate: { type: 'string' },
  concurrent: { type: 'string' },
  'call-seconds': { type: 'string', default: '30' },
  duration: { type: 'string' },
  probes: { type: 'string', default: '3' },
  scripts: { type: 'string' },
  threads: { type: 'string', default: '1' },
  vad: { type: 'string', default: 'silero' },
  'transcriber-ms': { type: 'string', default: '150' },
  'model-ms': { type: 'string', default: '200' },
  'voice-ms': { type: 'string', default: '0' },
  'vendor-jitter-ms': { type: 'string', default: '0' },
  label: { type: 'string' },
  out: { type: 'string' },
  help: { type: 'boolean', default: false },
} as const;

/** Caller numbers of the SIPp calls (load-call.xml): +1777 and SIPp's call number. */
const SIPP_CALLER_PREFIX = '+1777';
/** After one call length the load is steady; the window starts this much later still. */
const SETTLE_MS = 2000;
const IDLE_SAMPLE_MS = 3000;

async function main(argv: string[]): Promise<number> {
  const args = argv[0] === 'sip-load' ? argv.slice(1) : argv;
  let values;
  try {
    ({ values } = parseArgs({ args, options, strict: true }));
  } catch (error) {
    throw new HarnessError('ERR_BENCH_USAGE', `${(error as Error).message}\n${USAGE}`);
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const callSeconds = numberArg(values['call-seconds'], 'call-seconds', 1, 3600);
  if (values.rate !== undefined && values.concurrent !== undefined) {
    throw new HarnessError('ERR_BENCH_USAGE', 'give --rate or --concurrent, not both');
  }
  const ratePerSecond =
    values.concurrent === undefined
      ? numberArg(values.rate ?? '1', 'rate', 0.001, 1000)
      : integerArg(values.concurrent, 'concurrent', 1, 10_000) / callSeconds;
  const durationSeconds = numberArg(
    values.duration ?? String(callSeconds + 75),
    'duration',
    1,
    86_400,
  );
  if (durationSeconds <= callSeconds) {
    throw new HarnessError(
      'ERR_BENCH_USAGE',
      '--duration must be longer than --call-seconds: the load is steady only after one call length',
    );
  }
  const probes = integerArg(values.probes, 'probes', 0, 1000);
  if (values.vad !== 'silero' && values.vad !== 'energy') {
    throw new HarnessError('ERR_BENCH_USAGE', '--vad must be silero or energy');
  }
  if (!sippAvailable()) {
    throw new HarnessError(
      'ERR_BENCH_USAGE',
      'sipp is not installed (Debian package sip-tester: apt-get install sip-tester)',
    );
  }
  const vendors = {
    transcriberMs: numberArg(values['transcriber-ms'], 'transcriber-ms', 0, 10_000),
    modelMs: numberArg(values['model-ms'], 'model-ms', 0, 10_000),
    voiceMs: numberArg(values['voice-ms'], 'voice-ms', 0, 10_000),
    jitterMs: numberArg(values['vendor-jitter-ms'], 'vendor-jitter-ms', 0, 10_000),
  };
  const threads = integerArg(values.threads, 'threads', 0, 64);
  const scripts = probes > 0 ? await loadScripts(values.scripts, SIP_SAMPLE_RATE_HZ) : [];
  const callMs = callSeconds * 1000;
  const workDir = await mkdtemp(join(tmpdir(), 'parla-sip-load-'));
  let parla: SelfParla | null = null;
  let sipp: SippLoad | null = null;
  const interrupted = (): void => {
    sipp?.kill();
    void (parla?.close() ?? Promise.resolve())
      .then(() => rm(workDir, { recursive: true, force: true }))
      .finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted).once('SIGTERM', interrupted);
  try {
    const pcap = await buildCallerPcap(callMs + SETTLE_MS);
    await writeFile(join(workDir, 'caller.pcap'), pcap.bytes);
    console.error('starting a Parla of its own (vendor simulators, embedded store)…');
    parla = await startSelfParla({ ...vendors, threads, vad: values.vad });
    const run = await measure(parla, {
      ratePerSecond,
      callMs,
      durationMs: durationSeconds * 1000,
      probes,
      scripts,
      workDir,
      onSipp: (started) => (sipp = started),
    });
    const steadyCalls = ratePerSecond * callSeconds;
    const result: SipLoadResult = {
      format: SIP_LOAD_FORMAT,
      label:
        values.label ??
        `self (${values.vad} VAD, ${threads} worker thread${threads === 1 ? '' : 's'}), ` +
          `${steadyCalls.toFixed(0)} SIPp calls`,
      machine: run.machine,
      settings: {
        ratePerSecond,
        callSeconds,
        durationSeconds,
        steadyCalls,
        probes,
        scripts: scripts.map((s) => s.name),
        self: { vad: values.vad, threads, ...vendors },
        expectedLatencyMs: parla.expectedMs,
        callerAudioMs: pcap.durationMs,
      },
      ...run.figures,
    };
    const outPath = resolve(
      values.out ?? `bench/results/sip-load-${result.machine.date.replace(/[:.]/g, '-')}.json`,
    );
    await mkdir(dirname(outPath), { recursive: true });
    await writeFile(outPath, `${JSON.stringify(result, null, 1)}\n`);
    console.log(sipLoadText(result));
    console.log(`\nwrote ${outPath}`);
    const failedProbes = result.probes?.summary.failedCalls ?? 0;
    return result.sipp.exitCode === 0 && failedProbes === 0 ? 0 : 1;
  } finally {
    process.off('SIGINT', interrupted).off('SIGTERM', interrupted);
    await parla?.close();
    await rm(workDir, { recursive: true, force: true });
  }
}

interface MeasureSettings {
  ratePerSecond: number;
  callMs: number;
  durationMs: number;
  probes: number;
  scripts: Awaited<ReturnType<typeof loadScripts>>;
  workDir: string;
  onSipp: (sipp: SippLoad) => void;
}

/** One run: idle sample, SIPp load, steady window with probes, SIPp's end, stored calls. */
async function measure(
  parla: SelfParla,
  o: MeasureSettings,
): Promise<{
  machine: SipLoadResult['machine'];
  figures: Omit<SipLoadResult, 'format' | 'label' | 'machine' | 'settings'>;
}> {
  const machine = describeMachine();
  const startedCpu = process.cpuUsage();
  const startedMs = performance.now();
  const idle = await sampleFor(parla.pid, IDLE_SAMPLE_MS);

  const sipp = await startSippLoad({
    host: parla.sip.host,
    port: parla.sip.port,
    number: parla.sip.number,
    ratePerSecond: o.ratePerSecond,
    callMs: o.callMs,
    totalCalls: Math.max(1, Math.round((o.ratePerSecond * o.durationMs) / 1000)),
    workDir: o.workDir,
  });
  o.onSipp(sipp);
  const loadStartMs = performance.now();
  let sippOutcome: SippOutcome | null = null;
  const sippDone = sipp.done.then((outcome) => (sippOutcome = outcome));
  const until = (atMs: number): Promise<unknown> =>
    Promise.race([sleep(atMs - performance.now()), sippDone]);
  console.error(
    `SIPp: ${o.ratePerSecond.toFixed(3)} calls/s; steady after ${(o.callMs / 1000).toFixed(0)} s…`,
  );
  await until(loadStartMs + o.callMs + SETTLE_MS);

  // The steady window.
  const samplers = [parla.pid, parla.vendorsPid, sipp.pid].map((pid) => new ProcessSampler(pid));
  const started = await Promise.all(
    samplers.map((s) =>
      s.start().then(
        () => true,
        () => false,
      ),
    ),
  );
  const windowStartEpochMs = Date.now();
  const windowStartMs = performance.now();
  let probesRunning = 0;
  const probeCounts: number[] = [];
  const counter = setInterval(() => probeCounts.push(probesRunning), 250);
  const transports: SipCallerTransport[] = [];
  let probesEndMs = windowStartMs;
  // A probe run that throws (not a failed call: those are results) ends the bench after the load.
  const probeFailure: { error: HarnessError | null } = { error: null };
  const probeRun: Promise<RunResult | null> =
    o.probes === 0 || sippOutcome !== null
      ? Promise.resolve(null)
      : runSipProbes(
          parla,
          { scripts: o.scripts, calls: o.probes },
          transports,
          (running) => (probesRunning = running),
        ).then(
          (r) => {
            probesEndMs = performance.now();
            return r;
          },
          (error: unknown) => {
            probeFailure.error = new HarnessError('ERR_BENCH_PROTOCOL', 'the probe calls failed', {
              cause: error,
            });
            return null;
          },
        );
  console.error(
    `steady: ${o.probes} probe calls; load ends in ${((loadStartMs + o.durationMs - performance.now()) / 1000).toFixed(0)} s…`,
  );
  await until(loadStartMs + o.durationMs);
  const windowEndMs = performance.now();
  const windowEndEpochMs = Date.now();
  clearInterval(counter);
  const [parlaUsage, vendorsUsage, sippUsage] = await Promise.all(
    samplers.map((s, i) =>
      started[i] === true ? s.stop().catch((): ProcessUsage | null => null) : Promise.resolve(null),
    ),
  );
  const probesResult = await probeRun;
  if (probeFailure.error !== null) {
    throw probeFailure.error;
  }
  console.error('waiting for SIPp to end its calls…');
  const outcome = await sipp.done;
  const stored = await readStoredCalls({
    baseUrl: parla.url,
    apiKey: parla.apiKey,
    phoneNumberId: parla.phoneNumberId,
    callerNumber: (n) => n.startsWith(SIPP_CALLER_PREFIX),
    expectedCalls: outcome.counters?.successful ?? 0,
    waitMs: 30_000,
  });

  const open = outcome.openCalls.filter(
    (row) => row.atEpochMs >= windowStartEpochMs && row.atEpochMs <= windowEndEpochMs,
  );
  const meanSippCalls =
    open.length === 0 ? null : open.reduce((sum, row) => sum + row.calls, 0) / open.length;
  const meanProbeCalls =
    probeCounts.length === 0 ? 0 : probeCounts.reduce((a, b) => a + b, 0) / probeCounts.length;
  const meanCalls = (meanSippCalls ?? 0) + meanProbeCalls;
  const cpu = parlaUsage?.cpuPercent ?? null;
  const cpuPerCall = cpu === null || meanCalls === 0 ? null : cpu / meanCalls;
  const expectedMs = parla.expectedMs;
  const cpuUsed = process.cpuUsage(startedCpu);
  const wallMs = performance.now() - startedMs;
  return {
    machine,
    figures: {
      sipp: {
        exitCode: outcome.exitCode,
        counters: outcome.counters,
        inviteToOkMs: distribution(outcome.inviteToOkMs),
        cpuPercent: sippUsage?.cpuPercent ?? null,
        outputTail: outcome.exitCode === 0 ? null : outcome.outputTail,
      },
      window: {
        seconds: (windowEndMs - windowStartMs) / 1000,
        meanSippCalls,
        meanProbeCalls,
        parla: parlaUsage ?? null,
        parlaIdleCpuPercent: idle?.cpuPercent ?? null,
        vendors: vendorsUsage ?? null,
        cpuPerCallPercent: cpuPerCall,
        marginalCpuPerCallPercent:
          cpu === null || idle === null || meanCalls === 0
            ? null
            : (cpu - idle.cpuPercent) / meanCalls,
        callsPerCore: cpuPerCall === null || cpuPerCall <= 0 ? null : 100 / cpuPerCall,
        probesOutlastedMs: Math.max(0, probesEndMs - windowEndMs),
      },
      probes:
        probesResult === null
          ? null
          : {
              summary: summarize(probesResult.calls),
              pacing: probesResult.pacing,
              rtp: transports.map((t, call) => ({ call, ...t.rtpArrival.summary() })),
              calls: probesResult.calls,
            },
      sippCallsStored: {
        calls: stored.calls,
        ended: stored.ended,
        endedReasons: stored.endedReasons,
        turns: stored.turnStages.length,
        stagesMs: stageDistributions(stored.turnStages),
        ownAddedMs: distribution(
          stored.turnStages.map((t) =>
            t.turnLatency === undefined ? null : t.turnLatency - expectedMs,
          ),
        ),
      },
      harnessCpuPercent: ((cpuUsed.user + cpuUsed.system) / 1000 / wallMs) * 100,
      durationMs: wallMs,
    },
  };
}

/** Parla's CPU over `ms` (null when /proc cannot be read). */
async function sampleFor(pid: number, ms: number): Promise<ProcessUsage | null> {
  const sampler = new ProcessSampler(pid);
  try {
    await sampler.start();
    await sleep(ms);
    return await sampler.stop();
  } catch {
    return null;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, Math.max(0, ms)));
}

await runEntry(main);
