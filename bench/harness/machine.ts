import { readFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';

/** What a result was measured on: results are only comparable on the same kind of machine. */
export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryBytes: number;
  nodeVersion: string;
  platform: string;
  arch: string;
  /** ISO time the run started. */
  date: string;
}

export function describeMachine(now = new Date()): MachineInfo {
  const list = cpus();
  return {
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryBytes: totalmem(),
    nodeVersion: process.version,
    platform: process.platform,
    arch: process.arch,
    date: now.toISOString(),
  };
}

/** Linux clock ticks per second for /proc/<pid>/stat times (USER_HZ, 100 on every mainstream kernel). */
const TICKS_PER_SECOND = 100;
const PAGE_BYTES = 4096;

export interface ProcessUsage {
  /** CPU time used between start() and stop(), as % of one core. */
  cpuPercent: number;
  /** Largest resident set size seen while sampling. */
  peakRssBytes: number;
  lastRssBytes: number;
}

/**
 * Samples another process's CPU time and memory from /proc (Linux): the Parla server under test,
 * when the harness is told its pid. Threads (Parla's call workers) are included.
 */
export class ProcessSampler {
  readonly #pid: number;
  #startTicks = 0;
  #startMs = 0;
  #peakRss = 0;
  #lastRss = 0;
  #timer: NodeJS.Timeout | null = null;

  constructor(pid: number) {
    if (!Number.isInteger(pid) || pid < 1) {
      throw new RangeError(`pid must be a positive integer, got ${pid}`);
    }
    this.#pid = pid;
  }

  async start(intervalMs = 500): Promise<void> {
    const stat = await this.#read();
    this.#startTicks = stat.ticks;
    this.#startMs = performance.now();
    this.#peakRss = this.#lastRss = stat.rssBytes;
    this.#timer = setInterval(() => {
      this.#read().then(
        (s) => {
          this.#lastRss = s.rssBytes;
          this.#peakRss = Math.max(this.#peakRss, s.rssBytes);
        },
        () => undefined,
      );
    }, intervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<ProcessUsage> {
    if (this.#timer !== null) {
      clearInterval(this.#timer);
      this.#timer = null;
    }
    const stat = await this.#read();
    const seconds = (performance.now() - this.#startMs) / 1000;
    this.#lastRss = stat.rssBytes;
    this.#peakRss = Math.max(this.#peakRss, stat.rssBytes);
    return {
      cpuPercent:
        seconds > 0 ? ((stat.ticks - this.#startTicks) / TICKS_PER_SECOND / seconds) * 100 : 0,
      peakRssBytes: this.#peakRss,
      lastRssBytes: this.#lastRss,
    };
  }

  async #read(): Promise<{ ticks: number; rssBytes: number }> {
    const text = await readFile(`/proc/${this.#pid}/stat`, 'utf8');
    return parseProcStat(text);
  }
}

/** utime + stime (ticks) and rss (bytes) from a /proc/<pid>/stat line. */
export function parseProcStat(text: string): { ticks: number; rssBytes: number } {
  // The command name (field 2) is in parentheses and may hold spaces: split after its end.
  const fields = text
    .slice(text.lastIndexOf(')') + 2)
    .trim()
    .split(/\s+/);
  // fields[0] is field 3 (state): utime is field 14, stime 15, rss 24.
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  const rssPages = Number(fields[21]);
  if (![utime, stime, rssPages].every(Number.isFinite)) {
    throw new Error('unreadable /proc stat line');
  }
  return { ticks: utime + stime, rssBytes: rssPages * PAGE_BYTES };
}
