/**
 * Throughput of GET /tool and POST /assistant against a bare Fastify route on the same machine.
 * The servers run in a child process; autocannon runs here, so the two do not share one event loop.
 *   npm run bench -- control [--seconds 10] [--connections 10]
 * BENCH_DATABASE_URL=postgres://… measures against a PostgreSQL server instead of PGlite.
 */
import { spawn } from 'node:child_process';
import { cpus } from 'node:os';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';

interface Ports {
  parlaPort: number;
  barePort: number;
  key: string;
  store: string;
}

interface Measured {
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  non2xx: number;
  errors: number;
}

const { values } = parseArgs({
  args: process.argv.slice(2).filter((a) => a !== 'control'),
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '10' },
  },
});
const durationS = Number(values.seconds);
const connections = Number(values.connections);

const child = spawn(process.execPath, ['--import', 'tsx', 'bench/control-servers.ts'], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: process.env,
});
const firstLine = await new Promise<string>((resolve) => {
  createInterface({ input: child.stdout }).once('line', resolve);
});
const ports = JSON.parse(firstLine) as Ports;

async function measure(
  port: number,
  method: 'GET' | 'POST',
  path: string,
  key: string | null,
): Promise<Measured> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key !== null) {
    headers.authorization = `Bearer ${key}`;
  }
  const body =
    method === 'POST'
      ? JSON.stringify({
          name: 'Bench',
          firstMessage: 'Hello',
          model: { provider: 'openai', model: 'gpt-4o-mini' },
        })
      : undefined;
  const result = await autocannon({
    url: `http://127.0.0.1:${port}${path}`,
    method,
    headers,
    ...(body === undefined ? {} : { body }),
    connections,
    duration: durationS,
  });
  return {
    requestsPerSecond: result.requests.average,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

const rows: { case: string; parla: Measured; bare: Measured; ratio: number }[] = [];
for (const [method, path] of [
  ['GET', '/tool'],
  ['POST', '/assistant'],
] as const) {
  await measure(ports.parlaPort, method, path, ports.key); // warm-up run, discarded
  const parla = await measure(ports.parlaPort, method, path, ports.key);
  const bare = await measure(ports.barePort, method, path, null);
  rows.push({
    case: `${method} ${path}`,
    parla,
    bare,
    ratio: parla.requestsPerSecond / bare.requestsPerSecond,
  });
}
child.kill('SIGTERM');

const machine = { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, node: process.version };
console.table(
  rows.map((r) => ({
    case: r.case,
    'parla req/s': Math.round(r.parla.requestsPerSecond),
    'bare req/s': Math.round(r.bare.requestsPerSecond),
    'parla/bare': r.ratio.toFixed(3),
    'parla p50/p99 ms': `${r.parla.latencyP50Ms}/${r.parla.latencyP99Ms}`,
    'bare p50/p99 ms': `${r.bare.latencyP50Ms}/${r.bare.latencyP99Ms}`,
    'parla non-2xx': r.parla.non2xx,
  })),
);
mkdirSync('bench/results', { recursive: true });
const file = `bench/results/control-${new Date().toISOString().replace(/[:.]/g, '-')}.json`;
writeFileSync(
  file,
  JSON.stringify({ machine, store: ports.store, durationS, connections, rows }, null, 2),
);
console.log(
  `store: ${ports.store}; ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}; written ${file}`,
);
