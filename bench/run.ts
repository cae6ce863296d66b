/** `npm run bench -- <scenario>`: runs one benchmark scenario. */
const scenarios: Record<string, string> = {
  control: './control-throughput.js',
  latency: './harness/main.js',
  'pipeline-calls': './workers/pipeline-calls.js',
  'sip-load': './harness/sip-load.js',
};
const name = process.argv[2] ?? '';
const module = scenarios[name];
if (module === undefined) {
  console.error(`usage: npm run bench -- <${Object.keys(scenarios).join('|')}> [options]`);
  process.exit(2);
}
await import(module);
