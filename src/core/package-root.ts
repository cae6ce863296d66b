import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | null = null;

/** The folder holding Parla's package.json, whether running from src/ (tsx) or dist/. */
export function packageRoot(): string {
  if (cached !== null) {
    return cached;
  }
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) {
      throw new Error('package.json not found above ' + fileURLToPath(import.meta.url));
    }
    dir = parent;
  }
  cached = dir;
  return dir;
}
