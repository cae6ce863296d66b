/**
 * SIPp as the load generator of `npm run bench -- sip-load`: a UAC placing calls at a steady rate
 * with bench/fixtures/sipp/load-call.xml (run in a work folder that holds the caller's pcap),
 * each held for the call length, up to a total count. Its statistics file (`-trace_stat`, one row
 * a second) gives the calls open over time and the final counters; its response-time file
 * (`-trace_rtt`) gives INVITE → 200 for each call.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { copyFile, readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HarnessError } from './caller-transport.js';

const SCENARIO = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/sipp/load-call.xml');
const STAT_FILE = 'sipp-stat.csv';
const OUTPUT_TAIL_CHARS = 6000;

export interface SippLoadOptions {
  /** Parla's SIP address (UDP). */
  host: string;
  port: number;
  /** The number dialled. */
  number: string;
  /** Calls started per second (may be fractional). */
  ratePerSecond: number;
  /** How long each call is held after its ACK. */
  callMs: number;
  /** Calls placed in all: SIPp stops placing after them and exits when they have ended. */
  totalCalls: number;
  /** Holds caller.pcap (see caller-pcap.ts); SIPp runs here and writes its files here. */
  workDir: string;
}

/** SIPp's cumulative counters at the end of the run (its statistics file's `(C)` columns). */
export interface SippCounters {
  created: number;
  successful: number;
  failed: number;
  retransmissions: number;
  /** Failure causes with a non-zero count (`FailedTimeoutOnRecv` → 2, …). */
  failures: Record<string, number>;
  outOfCallMessages: number;
  deadCallMessages: number;
  warnings: number;
  fatalErrors: number;
  /** Mean held length of the calls (ms). */
  callLengthMeanMs: number | null;
}

export interface SippOutcome {
  /**
   * SIPp's exit code: 0 every call succeeded, 1 at least one failed, 97 stopped by a command,
   * 99 no call processed, 255 / 254 fatal (binding) error; null when it was killed.
   */
  exitCode: number | null;
  counters: SippCounters | null;
  /** Calls open, once a second (epoch ms of the row, count). */
  openCalls: { atEpochMs: number; calls: number }[];
  /** INVITE sent → 200 received, per call, ms. */
  inviteToOkMs: number[];
  /** The end of SIPp's screen output (its last statistics screen, errors). */
  outputTail: string;
}

export interface SippLoad {
  readonly pid: number;
  /** Resolves when SIPp has exited and its files are read. */
  readonly done: Promise<SippOutcome>;
  /** Stops SIPp now (an interrupted run). */
  kill(): void;
}

/** Whether the `sipp` command runs on this machine. */
export function sippAvailable(): boolean {
  return spawnSync('sipp', ['-v'], { stdio: 'ignore' }).error === undefined;
}

/** SIPp's `-r` / `-rp` for a rate in calls per second: whole calls per a period in ms. */
export function sippRate(ratePerSecond: number): { calls: number; periodMs: number } {
  if (!(ratePerSecond > 0)) {
    throw new RangeError('the call rate must be positive');
  }
  // Calls per 1–1000 s, as few calls per period as keep the rate within 0.1 %.
  for (let calls = 1; calls <= 1000; calls++) {
    const periodMs = Math.round((calls * 1000) / ratePerSecond);
    if (Math.abs(calls / periodMs - ratePerSecond / 1000) <= (ratePerSecond / 1000) * 0.001) {
      return { calls, periodMs };
    }
  }
  return { calls: Math.round(ratePerSecond * 1000), periodMs: 1_000_000 };
}

export async function startSippLoad(options: SippLoadOptions): Promise<SippLoad> {
  await copyFile(SCENARIO, join(options.workDir, 'load-call.xml'));
  const { calls, periodMs } = sippRate(options.ratePerSecond);
  const steadyCalls = (options.ratePerSecond * options.callMs) / 1000;
  const timeoutSeconds = Math.ceil(
    options.totalCalls / options.ratePerSecond + options.callMs / 1000 + 120,
  );
  const args = [
    `${options.host}:${options.port}`,
    '-sf',
    'load-call.xml',
    '-s',
    options.number,
    '-i',
    '127.0.0.1',
    '-p',
    '0',
    // SIPp's RTP port: the pcap is sent from it (raw sockets) and Parla's RTP arrives there.
    '-mp',
    String(40_000 + 2 * randomInt(0, 4000)),
    '-cp',
    '0',
    '-r',
    String(calls),
    '-rp',
    String(periodMs),
    '-m',
    String(options.totalCalls),
    // Calls open at once: room for three times the steady count (SIPp's own default rule).
    '-l',
    String(Math.max(4, Math.ceil(3 * steadyCalls))),
    '-d',
    String(Math.round(options.callMs)),
    '-aa',
    '-nostdin',
    '-trace_stat',
    '-stf',
    STAT_FILE,
    '-fd',
    '1',
    '-trace_rtt',
    '-rtt_freq',
    '1',
    '-timeout',
    `${timeoutSeconds}s`,
    '-timeout_error',
  ];
  const child = spawn('sipp', args, {
    cwd: options.workDir,
    env: { ...process.env, TERM: 'dumb' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString('latin1')).slice(-OUTPUT_TAIL_CHARS);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', (error) =>
      reject(new HarnessError('ERR_BENCH_CONNECT', `sipp: ${error.message}`, { cause: error })),
    );
    child.once('close', (code) => resolve(code));
  });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', () => resolve());
    exited.catch(reject);
  });
  const done = exited.then(async (exitCode) => {
    const stat = await readFile(join(options.workDir, STAT_FILE), 'latin1').catch(() => '');
    const rows = parseStatRows(stat);
    return {
      exitCode,
      counters: rows.length === 0 ? null : counters(rows[rows.length - 1]!),
      openCalls: rows.map((row) => ({
        atEpochMs: epochMs(row.CurrentTime ?? ''),
        calls: Number(row.CurrentCall ?? 0),
      })),
      inviteToOkMs: await readResponseTimes(options.workDir),
      outputTail: output,
    };
  });
  return {
    pid: child.pid!,
    done,
    kill: () => {
      child.kill('SIGKILL');
    },
  };
}

/** The rows of SIPp's statistics file (`;`-separated, a header line first) by column name. */
export function parseStatRows(text: string): Record<string, string>[] {
  const lines = text.split(/\r?\n/).filter((line) => line.trim() !== '');
  if (lines.length < 2) {
    return [];
  }
  const names = lines[0]!.split(';');
  return lines.slice(1).map((line) => {
    const cells = line.split(';');
    return Object.fromEntries(names.map((name, i) => [name, cells[i] ?? '']));
  });
}

function counters(row: Record<string, string>): SippCounters {
  const count = (name: string): number => Number(row[`${name}(C)`] ?? 0) || 0;
  const failures: Record<string, number> = {};
  for (const name of Object.keys(row)) {
    const cause = /^(Failed\w+)\(C\)$/.exec(name)?.[1];
    if (cause !== undefined && count(cause) > 0) {
      failures[cause] = count(cause);
    }
  }
  return {
    created: Number(row.TotalCallCreated ?? 0) || 0,
    successful: count('SuccessfulCall'),
    failed: count('FailedCall'),
    retransmissions: count('Retransmissions'),
    failures,
    outOfCallMessages: count('OutOfCallMsgs'),
    deadCallMessages: count('DeadCallMsgs'),
    warnings: count('Warnings'),
    fatalErrors: count('FatalErrors'),
    callLengthMeanMs: duration(row['CallLength(C)']),
  };
}

/** SIPp's `hh:mm:ss:uuuuuu` durations, in ms. */
export function duration(text: string | undefined): number | null {
  const match = /^(\d+):(\d+):(\d+):(\d+)$/.exec(text?.trim() ?? '');
  if (match === null) {
    return null;
  }
  const [, h, m, s, us] = match.map(Number) as [number, number, number, number, number];
  return ((h * 60 + m) * 60 + s) * 1000 + us / 1000;
}

/** `CurrentTime` cells end with the epoch time in seconds (`2026-11-22\t12:44:42.19\t1795….19`). */
function epochMs(text: string): number {
  const seconds = Number(text.trim().split(/\s+/).pop());
  return Number.isFinite(seconds) ? seconds * 1000 : Number.NaN;
}

/** `<scenario>_<pid>_rtt.csv`: `Date_ms;response_time_ms;rtd_no` rows, one per call. */
async function readResponseTimes(workDir: string): Promise<number[]> {
  const file = (await readdir(workDir)).find((name) => name.endsWith('_rtt.csv'));
  if (file === undefined) {
    return [];
  }
  const text = await readFile(join(workDir, file), 'latin1');
  return parseStatRows(text)
    .map((row) => Number(row.response_time_ms))
    .filter((ms) => Number.isFinite(ms));
}
