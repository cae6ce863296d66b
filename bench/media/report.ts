/**
 * Shared by the media benchmarks: runs the registered mitata benchmarks, each of which processes
 * one 20 ms frame per call, and prints per-frame cost and the share of one core that a stream
 * running that call every 20 ms needs.
 */
import { cpus, loadavg } from 'node:os';
import { run } from 'mitata';

const FRAME_MS = 20;

export async function runFrameBenchmarks(title: string): Promise<void> {
  const { benchmarks } = await run();
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  console.log(`\n${title} — Node ${process.version}, ${cpus().length} × ${cpu}`);
  console.log(
    `load average at the end: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log('| call (one 20 ms frame) | avg µs | p50 µs | p99 µs | share of one core |');
  console.log('|---|---:|---:|---:|---:|');
  for (const trial of benchmarks) {
    for (const result of trial.runs) {
      if (result.stats === undefined) {
        console.log(`| ${result.name} | failed: ${String(result.error)} | | | |`);
        continue;
      }
      const { avg, p50, p99 } = result.stats;
      const share = (avg / (FRAME_MS * 1e6)) * 100;
      console.log(
        `| ${result.name} | ${(avg / 1000).toFixed(2)} | ${(p50 / 1000).toFixed(2)} | ` +
          `${(p99 / 1000).toFixed(2)} | ${share.toFixed(3)} % |`,
      );
    }
  }
}
