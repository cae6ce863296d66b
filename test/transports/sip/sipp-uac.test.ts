import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SipHeaders } from '../../../src/transports/sip/headers.js';
import type { SipRequest, SipResponse } from '../../../src/transports/sip/message.js';
import { newTag } from '../../../src/transports/sip/name-addr.js';
import { SipTransactionLayer } from '../../../src/transports/sip/transaction-layer.js';
import { SipUdpTransport } from '../../../src/transports/sip/transport-udp.js';
import { hasSipp } from '../../support/sipp.js';

const SCENARIOS = fileURLToPath(new URL('../../fixtures/sip/sipp/', import.meta.url));

async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  const port = socket.address().port;
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

/** Starts SIPp as a one-call UAS on `port`; resolves with its exit code when it ends. */
function startSippUas(scenario: string, port: number, workDir: string) {
  const child: ChildProcess = spawn(
    'sipp',
    [
      '-sf',
      join(SCENARIOS, scenario),
      '-i',
      '127.0.0.1',
      '-p',
      String(port),
      '-t',
      'u1',
      '-m',
      '1',
      '-nostdin',
      '-timeout',
      '20s',
      '-timeout_error',
      '-trace_err',
    ],
    { cwd: workDir, env: { ...process.env, TERM: 'dumb' } },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; output: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, output: output.slice(-4000) })),
  );
  return { child, exited };
}

function outgoing(method: string, port: number): SipRequest {
  const headers = new SipHeaders([
    ['Max-Forwards', '70'],
    ['From', `<sip:parla@127.0.0.1>;tag=${newTag()}`],
    ['To', `<sip:sipp@127.0.0.1:${port}>`],
    ['Call-ID', `${newTag()}@parla.test`],
    ['CSeq', `1 ${method}`],
    ['Contact', '<sip:parla@127.0.0.1>'],
  ]);
  return {
    kind: 'request',
    method,
    uri: `sip:sipp@127.0.0.1:${port}`,
    headers,
    body: Buffer.alloc(0),
  };
}

/**
 * Our client transactions against SIPp as the far end. Requests may leave before SIPp has bound
 * its socket: timers A and E retransmit them, which is the point of having them.
 */
describe.skipIf(!hasSipp)('client transactions against a SIPp UAS', () => {
  let transport: SipUdpTransport;
  let layer: SipTransactionLayer;
  let workDir: string;

  beforeAll(async () => {
    transport = await SipUdpTransport.listen({
      host: '127.0.0.1',
      port: 0,
      onMessage: (message, source) => layer.receive(message, source),
    });
    layer = new SipTransactionLayer({ transports: [transport], onRequest: () => {} });
    workDir = mkdtempSync(join(tmpdir(), 'parla-sipp-uac-'));
  });

  afterAll(async () => {
    layer.close();
    await transport.close();
    rmSync(workDir, { recursive: true, force: true });
  });

  function send(request: SipRequest, port: number) {
    const statuses: number[] = [];
    const final = new Promise<SipResponse | 'timeout'>((resolve, reject) => {
      layer.sendRequest(
        request,
        { transport: 'UDP', address: '127.0.0.1', port },
        {
          onResponse: (response) => {
            statuses.push(response.status);
            if (response.status >= 200) {
              resolve(response);
            }
          },
          onTimeout: () => resolve('timeout'),
          onTransportError: reject,
        },
      );
    });
    return { statuses, final };
  }

  it('sends OPTIONS and gets the 200', async () => {
    const port = await freeUdpPort();
    const sipp = startSippUas('uas-options.xml', port, workDir);
    const { final } = send(outgoing('OPTIONS', port), port);
    const response = await final;
    expect(response !== 'timeout' && response.status).toBe(200);
    const result = await sipp.exited;
    expect(result.code, result.output).toBe(0);
  });

  it('sends an INVITE, hears 180 then 486, and ACKs it in the transaction', async () => {
    const port = await freeUdpPort();
    const sipp = startSippUas('uas-busy.xml', port, workDir);
    const { statuses, final } = send(outgoing('INVITE', port), port);
    const response = await final;
    expect(response !== 'timeout' && response.status).toBe(486);
    const result = await sipp.exited;
    expect(result.code, result.output).toBe(0);
    expect(statuses).toEqual([180, 486]);
  });
});
