/**
 * onnxruntime-node aborts the whole process (`terminate called after throwing an instance of
 * 'Napi::Error'`) when a worker thread is stopped in the middle of a session load or run. These
 * tests run the WorkerHost in a child process (an abort would otherwise take the test runner
 * down) and assert that it exits cleanly. Without the fix they aborted in most runs measured
 * (see docs/pipeline.md).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const child = fileURLToPath(new URL('./support/ort-thread-stop-child.ts', import.meta.url));

interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function runChild(args: string[]): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', child, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    proc.on('error', reject);
    proc.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

describe('stopping worker threads that use onnxruntime', () => {
  it('closes hosts whose threads are in the middle of Silero runs without aborting', async () => {
    const result = await runChild(['close-mid-run', '3']);
    expect(result.stderr).not.toContain('terminate called');
    expect(result).toMatchObject({ code: 0, signal: null });
    expect(result.stdout).toContain('stopped 3');
  }, 180_000);

  it('lets the process exit while threads are in the middle of Silero runs', async () => {
    const result = await runChild(['exit-mid-run']);
    expect(result.stderr).not.toContain('terminate called');
    expect(result).toMatchObject({ code: 0, signal: null });
    expect(result.stdout).toContain('exiting');
  }, 180_000);

  it('does not declare stalled, nor stop, a thread blocked in a long native run', async () => {
    const result = await runChild(['long-run']);
    expect(result.stderr).not.toContain('terminate called');
    expect(result).toMatchObject({ code: 0, signal: null });
    expect(result.stdout).toContain('long-run false deaths 0');
  }, 180_000);
});
