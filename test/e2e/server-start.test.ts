import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

function startServer(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { ...process.env, PARLA_LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const waitFor = async (pattern: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const match = pattern.exec(output);
      if (match !== null) {
        return match;
      }
      if (child.exitCode !== null) {
        throw new Error(`server exited: ${output}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`timed out waiting for ${String(pattern)}: ${output}`);
  };
  return { child, exited, waitFor, output: () => output };
}

describe('npm start on the embedded defaults', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'parla-e2e-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it(
    'creates an org, prints its key once, serves the API and stops cleanly',
    { timeout: 180_000 },
    async () => {
      const port = await freePort();
      const wsPort = await freePort();
      const env = {
        PARLA_DATA_DIR: dataDir,
        PARLA_PORT: String(port),
        PARLA_WS_PORT: String(wsPort),
        DATABASE_URL: '',
      };
      const first = startServer(env);
      const [, key] = await first.waitFor(/\n {2}(parla_\S+)\n/);
      await first.waitFor(/Parla API on/);
      const base = `http://127.0.0.1:${port}`;
      const created = await fetch(`${base}/assistant`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'e2e' }),
      });
      expect(created.status).toBe(201);
      expect((await fetch(`${base}/assistant`)).status).toBe(401);
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);

      // Second start: same data, no new key printed, the old key still works.
      const second = startServer(env);
      await second.waitFor(/Parla API on/);
      expect(second.output()).not.toContain('shown only this once');
      const list = await fetch(`${base}/assistant`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(((await list.json()) as { name: string }[]).map((a) => a.name)).toEqual(['e2e']);
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    },
  );

  it('refuses a bad setting with a message naming it', { timeout: 60_000 }, async () => {
    const bad = startServer({ PARLA_DATA_DIR: dataDir, PARLA_PORT: 'eighty' });
    expect(await bad.exited).toBe(1);
    expect(bad.output()).toMatch(/port \(PARLA_PORT\)/);
  });
});
