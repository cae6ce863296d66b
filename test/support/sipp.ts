import { spawn, spawnSync } from 'node:child_process';

/** Where Debian's sip-tester package puts the pcaps SIPp ships (G.711, RFC 2833 DTMF). */
export const SIPP_PCAP_DIR = '/usr/share/sip-tester';

/**
 * Whether `sipp` can run here. Outside CI the SIPp tests skip with a warning when it is missing;
 * in CI (CI=true, set by .ci/run, which installs sip-tester) a missing SIPp is an error.
 */
export const hasSipp = spawnSync('sipp', ['-v'], { stdio: 'ignore' }).error === undefined;
if (!hasSipp && process.env.CI === 'true') {
  throw new Error(
    'sipp is not installed: CI must run the SIPp tests (.ci/run installs sip-tester)',
  );
}
if (!hasSipp) {
  console.warn(
    'sipp is not installed (Debian package sip-tester; .ci/run installs it): skipping SIPp tests',
  );
}

/** Runs SIPp with `args` in `workDir`; resolves with its exit code and the end of its output. */
export function runSipp(
  args: readonly string[],
  workDir: string,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('sipp', args, { cwd: workDir, env: { ...process.env, TERM: 'dumb' } });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('close', (code) => resolve({ code, output: output.slice(-4000) }));
  });
}
