/**
 * The latency benchmark harness (docs/benchmark-harness.md).
 *   npm run bench -- latency --url http://127.0.0.1:3000 --key $KEY --assistant-id <id> --calls 10
 *   npm run bench -- latency --fake --calls 5              (a dry run against an in-process fake)
 *   npm run bench -- latency --self --calls 10             (a Parla of its own on vendor simulators)
 *   npm run bench -- latency --self --transport sip --calls 10   (the same calls over SIP/RTP)
 *   npm run bench -- latency … --capacity --max-calls 200   (ramp until deadlines are missed)
 *   npm run bench -- latency --compare before.json after.json
 *   npm run bench -- latency --report result.json           (rewrite a result's HTML report)
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { searchCapacity, type CapacityPoint, type CapacityResult } from './capacity.js';
import { HarnessError, type TransportFactory } from './caller-transport.js';
import { integerArg as integer, loadScripts, numberArg as number, runEntry } from './cli-values.js';
import { RealClock } from './clock.js';
import { compareText } from './compare.js';
import { fakeTransportFactory } from './fake-transport.js';
import { renderHtmlReport } from './html-report.js';
import { describeMachine, ProcessSampler, type ProcessUsage } from './machine.js';
import { RESULT_FORMAT, readResult, summarize, type BenchResult } from './result-file.js';
import { runCalls, type RunResult } from './runner.js';
import { startSelfParla } from './self-parla.js';
import { replyDurationMs } from './self-vendors.js';
import { SIP_SAMPLE_RATE_HZ, sipTransportFactory } from './sip-transport.js';
import { distribution } from './stats.js';
import { ProgressDisplay, summaryText } from './text-output.js';
import { WebsocketCallerTransport } from './websocket-transport.js';

const USAGE = `usage: npm run bench -- latency [options]
  --url <base URL>          Parla (or a compatible server) to call; with --key and --assistant-id
  --key <API key>           or PARLA_API_KEY
  --assistant-id <id>       the assistant the calls talk to
  --transport <name>        websocket (default) or sip: calls over SIP/RTP (PCMU, 8 kHz) to
                            --sip-target, dialling --sip-number (with --self: Parla's own)
  --sip-target <host:port>  Parla's SIP address (IPv4, UDP)
  --sip-number <number>     a byo-phone-number routed to the assistant; its trunk must allow
                            this machine's address as a gateway
  --phone-number-id <id>    that number's id (optional: to fetch per-stage timings after calls)
  --self                    start a Parla of its own (child process, embedded store, vendor
                            simulators, an assistant made through the API); sets --url, --key,
                            --assistant-id, --server-pid and --expected-ms
  --transcriber-ms <ms>     self: the transcriber's latency after end of speech (default 150)
  --model-ms <ms>           self: the model's first-token latency (default 200)
  --voice-ms <ms>           self: the voice's time to first audio byte (default 0)
  --vendor-jitter-ms <ms>   self: each of those three plus uniform 0..this (default 0)
  --threads <n>             self: Parla's worker threads (default 0: one per core)
  --vad <silero|energy>     self: Parla's VAD (default silero)
  --fake                    call an in-process fake server instead (dry run of the harness)
  --fake-latency-ms <ms>    the fake's reply latency (default 700)
  --calls <n>               concurrent calls (default 1)
  --turns <n>               caller turns per call (default: each script's own)
  --scripts <a,b>           script files or names in bench/fixtures/callers (default: all)
  --expected-ms <ms>        latency the scenario adds on purpose (simulated vendors, waits)
  --expected-reply-ms <ms>  the natural length of the replies backchannels land in: a stop
                            before it counts as a false interruption (self: set from the
                            simulated answer; otherwise the server's clear messages decide)
  --sample-rate <Hz>        call audio rate (default 16000; SIP calls are always 8000)
  --stagger-ms <ms>         time between call starts (default 100)
  --server-pid <pid>        sample this process's CPU and memory (the server, on this machine)
  --label <text>            names the run in the report
  --out <file.json>         result file (default bench/results/latency-<time>.json; HTML beside it)
  --capacity                ramp concurrency until deadline misses or added p99 > threshold
  --max-calls <n>           capacity: upper bound (default 1000)
  --max-added-p99-ms <ms>   capacity: threshold (default 20)
  --max-misses-per-call <n> capacity: deadline misses tolerated per call (default 0)
  --compare <a.json> <b.json>  print two results side by side with ratios
  --report <result.json>    write the HTML report of an existing result`;

const options = {
  url: { type: 'string' },
  key: { type: 'string' },
  'assistant-id': { type: 'string' },
  self: { type: 'boolean', default: false },
  'transcriber-ms': { type: 'string', default: '150' },
  'model-ms': { type: 'string', default: '200' },
  'voice-ms': { type: 'string', default: '0' },
  transport: { type: 'string', default: 'websocket' },
  'sip-target': { type: 'string' },
  'sip-number': { type: 'string' },
  'phone-number-id': { type: 'string' },
  'vendor-jitter-ms': { type: 'string', default: '0' },
  threads: { type: 'string', default: '0' },
  vad: { type: 'string', default: 'silero' },
  fake: { type: 'boolean', default: false },
  'fake-latency-ms': { type: 'string', default: '700' },
  calls: { type: 'string', default: '1' },
  turns: { type: 'string' },
  scripts: { type: 'string' },
  'expected-ms': { type: 'string' },
  'expected-reply-ms': { type: 'string' },
  'sample-rate': { type: 'string', default: '16000' },
  'stagger-ms': { type: 'string', default: '100' },
  'server-pid': { type: 'string' },
  label: { type: 'string' },
  out: { type: 'string' },
  capacity: { type: 'boolean', default: false },
  'max-calls': { type: 'string', default: '1000' },
  'max-added-p99-ms': { type: 'string', default: '20' },
  'max-misses-per-call': { type: 'string', default: '0' },
  compare: { type: 'boolean', default: false },
  report: { type: 'string' },
  help: { type: 'boolean', default: false },
} as const;

type Values = ReturnType<
  typeof parseArgs<{ options: typeof options; allowPositionals: true }>
>['values'];

async function main(argv: string[]): Promise<number> {
  const args = argv[0] === 'latency' ? argv.slice(1) : argv;
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new HarnessError('ERR_BENCH_USAGE', `${(error as Error).message}\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (values.compare) {
    if (positionals.length !== 2) {
      throw new HarnessError('ERR_BENCH_USAGE', '--compare needs two result files');
    }
    const [a, b] = positionals as [string, string];
    console.log(compareText(await readResult(a), await readResult(b), [a, b]));
    return 0;
  }
  if (positionals.length > 0) {
    throw new HarnessError(
      'ERR_BENCH_USAGE',
      `unexpected arguments: ${positionals.join(' ')}\n${USAGE}`,
    );
  }
  if (values.report !== undefined) {
    const result = await readResult(values.report);
    const htmlPath = values.report.replace(/\.json$/, '') + '.html';
    await writeFile(htmlPath, renderHtmlReport(result));
    console.log(`wrote ${htmlPath}`);
    return 0;
  }
  if (values.transport !== 'websocket' && values.transport !== 'sip') {
    throw new HarnessError('ERR_BENCH_USAGE', '--transport must be websocket or sip');
  }
  if (!values.self) {
    return run(values);
  }
  if (values.vad !== 'silero' && values.vad !== 'energy') {
    throw new HarnessError('ERR_BENCH_USAGE', '--vad must be silero or energy');
  }
  const vendors = {
    transcriberMs: number(values['transcriber-ms'], 'transcriber-ms', 0, 10_000),
    modelMs: number(values['model-ms'], 'model-ms', 0, 10_000),
    voiceMs: number(values['voice-ms'], 'voice-ms', 0, 10_000),
    jitterMs: number(values['vendor-jitter-ms'], 'vendor-jitter-ms', 0, 10_000),
  };
  console.error('starting a Parla of its own (vendor simulators, embedded store)…');
  const parla = await startSelfParla({
    ...vendors,
    threads: integer(values.threads, 'threads', 0, 64),
    vad: values.vad,
  });
  // Interrupted: stop the children before going (they would outlive the harness otherwise).
  const interrupted = (): void => {
    void parla.close().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted).once('SIGTERM', interrupted);
  try {
    return await run(
      {
        ...values,
        url: parla.url,
        key: parla.apiKey,
        'assistant-id': parla.assistantId,
        'sip-target': `${parla.sip.host}:${parla.sip.port}`,
        'sip-number': parla.sip.number,
        'phone-number-id': parla.phoneNumberId,
        'server-pid': values['server-pid'] ?? String(parla.pid),
        'expected-ms': values['expected-ms'] ?? String(parla.expectedMs),
        'expected-reply-ms':
          values['expected-reply-ms'] ??
          String(
            replyDurationMs(
              values.transport === 'sip' || values['sample-rate'] === '8000' ? 8000 : 16_000,
            ),
          ),
        label:
          values.label ?? `self (${values.vad} VAD, ${values.transport}), ${values.calls} calls`,
      },
      { vad: values.vad, threads: values.threads, ...vendors },
      parla.vendorsPid,
    );
  } finally {
    process.off('SIGINT', interrupted).off('SIGTERM', interrupted);
    await parla.close();
  }
}

/**
 * One benchmark run. `self` describes a `--self` Parla (kept in the result's target, with the
 * CPU and memory of `vendorsPid`, the simulators' process, during the final run).
 */
async function run(
  values: Values,
  self: Record<string, unknown> | null = null,
  vendorsPid: number | null = null,
): Promise<number> {
  const calls = integer(values.calls, 'calls', 1, 10_000);
  const turns = values.turns === undefined ? null : integer(values.turns, 'turns', 1, 1000);
  const sip = values.transport === 'sip';
  const sampleRateHz = sip
    ? SIP_SAMPLE_RATE_HZ
    : integer(values['sample-rate'], 'sample-rate', 8000, 48_000);
  const staggerMs = number(values['stagger-ms'], 'stagger-ms', 0, 60_000);
  const expectedMs =
    values['expected-ms'] === undefined
      ? null
      : number(values['expected-ms'], 'expected-ms', 0, 60_000);
  const expectedReplyMs =
    values['expected-reply-ms'] === undefined
      ? null
      : number(values['expected-reply-ms'], 'expected-reply-ms', 0, 600_000);
  const measure = {
    ...(expectedMs === null ? {} : { expectedLatencyMs: expectedMs }),
    ...(expectedReplyMs === null ? {} : { expectedReplyMs }),
  };
  const clock = new RealClock();
  let transport: TransportFactory;
  let target: BenchResult['target'];
  if (values.fake) {
    const latencyMs = number(values['fake-latency-ms'], 'fake-latency-ms', 100, 10_000);
    transport = fakeTransportFactory({
      clock,
      latencyMs,
      sampleRateHz,
      endOfTurnSilenceMs: Math.min(500, latencyMs),
      replyMs: 5000,
      bargeInAfterMs: 700,
      firstMessageAfterMs: 300,
      sendStages: true,
    });
    target = { transport: 'fake', url: null, assistantId: null };
  } else if (sip) {
    ({ transport, target } = sipTransport(values, self));
  } else {
    const url = values.url;
    const apiKey = values.key ?? process.env.PARLA_API_KEY;
    const assistantId = values['assistant-id'];
    if (url === undefined || apiKey === undefined || assistantId === undefined) {
      throw new HarnessError(
        'ERR_BENCH_USAGE',
        `give --url, --key and --assistant-id, or --fake\n${USAGE}`,
      );
    }
    if (!/^https?:\/\//.test(url)) {
      throw new HarnessError('ERR_BENCH_USAGE', '--url must start with http:// or https://');
    }
    transport = () =>
      new WebsocketCallerTransport({ baseUrl: url, apiKey, assistantId, sampleRateHz });
    target = { transport: 'websocket', url, assistantId, ...(self === null ? {} : { self }) };
  }
  const scripts = await loadScripts(values.scripts, sampleRateHz);
  const pid =
    values['server-pid'] === undefined
      ? null
      : integer(values['server-pid'], 'server-pid', 1, 2 ** 22);
  const machine = describeMachine();
  const startedCpu = process.cpuUsage();
  const startedMs = performance.now();

  const once = async (
    concurrency: number,
  ): Promise<{ run: RunResult; server: ProcessUsage | null }> => {
    const sampler = pid === null ? null : new ProcessSampler(pid);
    const vendorsSampler = vendorsPid === null ? null : new ProcessSampler(vendorsPid);
    await vendorsSampler?.start().catch(() => undefined);
    await sampler?.start().catch((error: unknown) => {
      throw new HarnessError(
        'ERR_BENCH_USAGE',
        `--server-pid ${pid}: cannot read /proc/${pid}/stat`,
        {
          cause: error,
        },
      );
    });
    const display = new ProgressDisplay();
    const runResult = await runCalls({
      clock,
      transport,
      scripts,
      calls: concurrency,
      ...(turns === null ? {} : { turnsPerCall: turns }),
      staggerMs,
      measure,
      onProgress: (p) => display.update(p),
    });
    display.done();
    const server = await (sampler?.stop() ?? Promise.resolve(null)).catch(() => {
      console.error(`warning: process ${pid} could not be read at the end of the run`);
      return null;
    });
    const vendorsUsage = await vendorsSampler?.stop().catch(() => null);
    if (self !== null && vendorsUsage !== undefined) {
      self.vendors = vendorsUsage;
    }
    return { run: runResult, server };
  };

  let final: { run: RunResult; server: ProcessUsage | null };
  let capacity: CapacityResult | null = null;
  if (values.capacity) {
    const byConcurrency = new Map<number, { run: RunResult; server: ProcessUsage | null }>();
    let baselineMs: number | null = null;
    capacity = await searchCapacity({
      cores: machine.cores,
      maxConcurrency: integer(values['max-calls'], 'max-calls', 1, 10_000),
      maxAddedP99Ms: number(values['max-added-p99-ms'], 'max-added-p99-ms', 0, 60_000),
      maxMissesPerCall: number(values['max-misses-per-call'], 'max-misses-per-call', 0, 10_000),
      measure: async (concurrency): Promise<CapacityPoint> => {
        console.error(`capacity: ${concurrency} concurrent calls`);
        const measured = await once(concurrency);
        byConcurrency.set(concurrency, measured);
        const allTurns = measured.run.calls.flatMap((c) => c.turns);
        // Without an expected latency, "added" is the growth over the first (least loaded) point.
        baselineMs ??= distribution(allTurns.map((t) => t.voiceToVoiceMs))?.p50 ?? null;
        const addedValues = allTurns.map((t) =>
          expectedMs !== null
            ? t.addedMs
            : t.voiceToVoiceMs === null || baselineMs === null
              ? null
              : t.voiceToVoiceMs - baselineMs,
        );
        const added = distribution(addedValues);
        return {
          concurrency,
          addedP50Ms: added?.p50 ?? null,
          addedP99Ms: added?.p99 ?? null,
          deadlineMisses: measured.run.calls.reduce((s, c) => s + c.lateChunks + c.holes, 0),
          failedCalls: measured.run.calls.filter((c) => c.error !== null).length,
          cpuPercent: measured.server?.cpuPercent ?? null,
          rssBytes: measured.server?.peakRssBytes ?? null,
          pacingLateP99Ms: measured.run.pacing.lateP99Ms,
        };
      },
    });
    final =
      byConcurrency.get(capacity.maxConcurrency) ??
      byConcurrency.get(capacity.points[0]!.concurrency)!;
  } else {
    final = await once(calls);
  }
  const cpu = process.cpuUsage(startedCpu);
  const wallMs = performance.now() - startedMs;
  const result: BenchResult = {
    format: RESULT_FORMAT,
    label: values.label ?? `${target.transport} ${final.run.calls.length} calls`,
    machine,
    target,
    settings: {
      calls: final.run.calls.length,
      turnsPerCall: turns,
      scripts: scripts.map((s) => s.name),
      expectedLatencyMs: expectedMs,
      expectedReplyMs,
    },
    summary: summarize(final.run.calls),
    pacing: final.run.pacing,
    harnessCpuPercent: ((cpu.user + cpu.system) / 1000 / wallMs) * 100,
    server: final.server,
    durationMs: final.run.durationMs,
    calls: final.run.calls,
    capacity,
  };
  const outPath = resolve(
    values.out ?? `bench/results/latency-${machine.date.replace(/[:.]/g, '-')}.json`,
  );
  await mkdir(dirname(outPath), { recursive: true });
  await writeFile(outPath, `${JSON.stringify(result, null, 1)}\n`);
  const htmlPath = outPath.replace(/\.json$/, '') + '.html';
  await writeFile(htmlPath, renderHtmlReport(result));
  console.log(summaryText(result));
  console.log(`\nwrote ${outPath}\n      ${htmlPath}`);
  return result.summary.failedCalls === result.summary.calls ? 1 : 0;
}

/** `--transport sip`: see sipTransportFactory. */
function sipTransport(
  values: Values,
  self: Record<string, unknown> | null,
): { transport: TransportFactory; target: BenchResult['target'] } {
  const apiKey = values.key ?? process.env.PARLA_API_KEY;
  const phoneNumberId = values['phone-number-id'];
  const transport = sipTransportFactory({
    target: values['sip-target'] ?? '',
    number: values['sip-number'] ?? '',
    ...(values.url !== undefined && apiKey !== undefined && phoneNumberId !== undefined
      ? { api: { baseUrl: values.url, apiKey, phoneNumberId } }
      : {}),
  });
  return {
    transport,
    target: {
      transport: 'sip',
      url: `sip:${values['sip-number']}@${values['sip-target']}`,
      assistantId: values['assistant-id'] ?? null,
      ...(self === null ? {} : { self }),
    },
  };
}

await runEntry(main);
