/** Command-line values shared by the bench entries: checked numbers and the caller scripts. */
import { readdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HarnessError } from './caller-transport.js';
import { loadScript, type LoadedScript } from './script.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../fixtures/callers');

/** `--name`'s value as a number in [min, max], or a usage error. */
export function numberArg(text: string, name: string, min: number, max: number): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < min || value > max) {
    throw new HarnessError(
      'ERR_BENCH_USAGE',
      `--${name} must be a number from ${min} to ${max}, got "${text}"`,
    );
  }
  return value;
}

/** As numberArg, and a whole number. */
export function integerArg(text: string, name: string, min: number, max: number): number {
  const value = numberArg(text, name, min, max);
  if (!Number.isInteger(value)) {
    throw new HarnessError('ERR_BENCH_USAGE', `--${name} must be a whole number, got "${text}"`);
  }
  return value;
}

/**
 * The scripts `list` names (comma-separated files, or names in bench/fixtures/callers), or every
 * script there when it is undefined; loaded at `sampleRateHz`.
 */
export async function loadScripts(
  list: string | undefined,
  sampleRateHz: number,
): Promise<LoadedScript[]> {
  const paths =
    list === undefined
      ? (await readdir(FIXTURES))
          .filter((f) => f.endsWith('.script.json'))
          .sort()
          .map((f) => join(FIXTURES, f))
      : list
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '')
          .map((s) =>
            s.includes('/') || s.endsWith('.json')
              ? resolve(s)
              : join(FIXTURES, `${s}.script.json`),
          );
  if (paths.length === 0 || paths.length > 100) {
    throw new HarnessError('ERR_BENCH_USAGE', '--scripts must name 1–100 scripts');
  }
  return Promise.all(paths.map((path) => loadScript(path, sampleRateHz)));
}

/**
 * Runs a bench entry's `main` on the process arguments: its return is the exit code; a
 * HarnessError is printed with its code (exit 2 for usage errors, 1 otherwise).
 */
export async function runEntry(main: (argv: string[]) => Promise<number>): Promise<void> {
  try {
    process.exitCode = await main(process.argv.slice(2));
  } catch (error) {
    if (error instanceof HarnessError) {
      console.error(`${error.code}: ${error.message}`);
      process.exitCode = error.code === 'ERR_BENCH_USAGE' ? 2 : 1;
    } else {
      throw error;
    }
  }
}
