import { describe, expect, it } from 'vitest';
import {
  parseDigestCredentials,
  verifyDigestCredentials,
} from '../../../src/transports/sip/digest.js';
import {
  createResponse,
  type SipRequest,
  type SipResponse,
} from '../../../src/transports/sip/message.js';
import {
  SipRegistration,
  grantedExpiry,
  refreshDelayMs,
  type SipRegistrationState,
} from '../../../src/transports/sip/sip-registration.js';
import { SipTransactionLayer } from '../../../src/transports/sip/transaction-layer.js';
import { SipUdpTransport } from '../../../src/transports/sip/transport-udp.js';
import type { SipSource } from '../../../src/transports/sip/transport.js';
import { freeUdpPort, startSippUas } from '../../calls/sip-call-harness.js';
import { hasSipp } from '../../support/sipp.js';
import { ManualScheduler } from './support/manual-scheduler.js';
import { RecordingTransport } from './support/recording-transport.js';

const REGISTRAR: SipSource = { transport: 'UDP', address: '203.0.113.5', port: 5060 };

/** A registration over a recording transport on a virtual clock: the test plays the registrar. */
function setup(options: { auth?: boolean; expiresSeconds?: number } = {}) {
  const scheduler = new ManualScheduler();
  const transport = new RecordingTransport('UDP', scheduler);
  const layer = new SipTransactionLayer({
    transports: [transport],
    scheduler,
    onRequest: () => {},
  });
  const states: [SipRegistrationState, string][] = [];
  const registration = new SipRegistration({
    transactions: layer,
    target: { transport: 'UDP', address: REGISTRAR.address, port: REGISTRAR.port },
    domain: 'trunk.example',
    user: 'parla-trunk',
    contactUri: 'sip:parla-trunk@192.0.2.1:5060',
    ...(options.auth !== false && { auth: { username: 'parla-trunk', password: 'pw' } }),
    ...(options.expiresSeconds !== undefined && { expiresSeconds: options.expiresSeconds }),
    retryBaseMs: 1000,
    maxRetryMs: 5000,
    scheduler,
    onStateChange: (state, detail) => states.push([state, detail]),
  });
  const registers = (): SipRequest[] =>
    transport.sent
      .map((entry) => entry.message)
      .filter((m): m is SipRequest => m.kind === 'request' && m.method === 'REGISTER');
  const last = (): SipRequest => registers().at(-1)!;
  const reply = (status: number, headers: [string, string][] = []): void => {
    const response: SipResponse = createResponse(last(), status, { toTag: 'reg1' });
    headers.forEach(([name, value]) => response.headers.append(name, value));
    layer.receive(response, REGISTRAR);
  };
  return { scheduler, registration, registers, last, reply, states };
}

describe('SipRegistration against a scripted registrar', () => {
  it('answers the challenge, keeps Call-ID, counts CSeq up and refreshes before expiry', () => {
    const t = setup();
    t.registration.start();
    const first = t.last();
    expect(first.uri).toBe('sip:trunk.example');
    expect(first.headers.get('To')).toBe('<sip:parla-trunk@trunk.example>');
    expect(first.headers.get('Contact')).toBe('<sip:parla-trunk@192.0.2.1:5060>');
    expect(first.headers.get('Expires')).toBe('3600');
    t.reply(401, [['WWW-Authenticate', 'Digest realm="trunk", nonce="n1", qop="auth"']]);
    const second = t.last();
    expect(second.headers.get('Call-ID')).toBe(first.headers.get('Call-ID'));
    expect(second.headers.get('CSeq')).toBe('2 REGISTER');
    const credentials = parseDigestCredentials(second.headers.get('Authorization')!)!;
    expect(credentials).toMatchObject({
      username: 'parla-trunk',
      realm: 'trunk',
      uri: 'sip:trunk.example',
    });
    expect(verifyDigestCredentials(credentials, 'REGISTER', 'pw')).toBe(true);
    t.reply(200, [['Contact', '<sip:parla-trunk@192.0.2.1:5060>;expires=120']]);
    expect(t.registration.state).toBe('registered');
    expect(t.registration.grantedSeconds).toBe(120);
    t.scheduler.advance(89_000);
    expect(t.registers()).toHaveLength(2);
    t.scheduler.advance(1_000);
    expect(t.registers()).toHaveLength(3);
    expect(t.last().headers.get('CSeq')).toBe('3 REGISTER');
  });

  it('gives up on a second challenge for the same credentials and backs off', () => {
    const t = setup();
    t.registration.start();
    const challenge: [string, string] = ['WWW-Authenticate', 'Digest realm="r", nonce="n"'];
    t.reply(401, [challenge]);
    t.reply(401, [challenge]);
    expect(t.registration.state).toBe('failed');
    expect(t.states.at(-1)![1]).toContain('401');
    // Retries after 1 s, then 2 s, 4 s, capped at 5 s.
    const retryTimes: number[] = [];
    for (let round = 0; round < 4; round++) {
      const before = t.registers().length;
      const startMs = t.scheduler.nowMs;
      while (t.registers().length === before) {
        t.scheduler.advance(100);
      }
      retryTimes.push(t.scheduler.nowMs - startMs);
      t.reply(503);
    }
    expect(retryTimes).toEqual([1000, 2000, 4000, 5000]);
  });

  it('takes Min-Expires after a 423 and retries at once', () => {
    const t = setup({ auth: false, expiresSeconds: 60 });
    t.registration.start();
    t.reply(423, [['Min-Expires', '300']]);
    expect(t.last().headers.get('Expires')).toBe('300');
    t.reply(200, [['Expires', '300']]);
    expect(t.registration.grantedSeconds).toBe(300);
  });

  it('refuses a challenge it has no credentials for', () => {
    const t = setup({ auth: false });
    t.registration.start();
    t.reply(407, [['Proxy-Authenticate', 'Digest realm="r", nonce="n"']]);
    expect(t.registration.state).toBe('failed');
  });

  it('unregisters with Expires 0 on close', async () => {
    const t = setup({ auth: false });
    t.registration.start();
    t.reply(200, [['Expires', '3600']]);
    const closed = t.registration.close();
    expect(t.last().headers.get('Expires')).toBe('0');
    t.reply(200);
    await closed;
    expect(t.registration.state).toBe('closed');
    const sent = t.registers().length;
    t.scheduler.advance(10 * 3600_000);
    expect(t.registers()).toHaveLength(sent); // no refresh after close
  });

  it('refreshes 30 s early, or halfway through short bindings', () => {
    expect(refreshDelayMs(3600)).toBe(3_570_000);
    expect(refreshDelayMs(60)).toBe(30_000);
    expect(refreshDelayMs(1)).toBe(1000);
  });
});

describe.skipIf(!hasSipp)('SipRegistration against a SIPp registrar', () => {
  async function register(password: string) {
    const port = await freeUdpPort();
    const sipp = startSippUas('outbound-register.xml', port);
    const layerRef: { layer?: SipTransactionLayer } = {};
    const transport = await SipUdpTransport.listen({
      host: '127.0.0.1',
      port: 0,
      onMessage: (message, source) => layerRef.layer?.receive(message, source),
    });
    const layer = new SipTransactionLayer({ transports: [transport], onRequest: () => {} });
    layerRef.layer = layer;
    const states: SipRegistrationState[] = [];
    let registered = 0;
    const registration: SipRegistration = new SipRegistration({
      transactions: layer,
      target: { transport: 'UDP', address: '127.0.0.1', port },
      domain: 'trunk.test',
      user: 'parla-trunk',
      contactUri: `sip:parla-trunk@127.0.0.1:${transport.port}`,
      auth: { username: 'parla-trunk', password },
      onStateChange: (state) => {
        states.push(state);
        if (state === 'registered' && ++registered === 2) {
          void registration.close();
        }
      },
    });
    registration.start();
    const result = await sipp.exited;
    await registration.close();
    layer.close();
    await transport.close();
    return { result, states };
  }

  it('registers with digest, refreshes and unregisters', { timeout: 40_000 }, async () => {
    const { result, states } = await register('s3cret-pass');
    expect(result.code, result.output).toBe(0);
    expect(states).toEqual([
      'registering',
      'registering',
      'registered',
      'registering',
      'registered',
      'closed',
    ]);
  });

  it(
    'fails (and would retry) when the registrar refuses the credentials',
    { timeout: 40_000 },
    async () => {
      const { result, states } = await register('wrong');
      expect(result.code, result.output).toBe(0);
      expect(states.slice(0, 3)).toEqual(['registering', 'registering', 'failed']);
    },
  );
});

describe('grantedExpiry', () => {
  it('prefers our Contact expires param over the Expires header', () => {
    const request: SipRequest = setupRequest();
    const response = createResponse(request, 200);
    response.headers
      .append('Contact', '<sip:other@198.51.100.1>;expires=10')
      .append('Contact', '<sip:parla-trunk@192.0.2.1:5060;transport=udp>;expires=90')
      .append('Expires', '600');
    expect(grantedExpiry(response, 'sip:parla-trunk@192.0.2.1:5060')).toBe(90);
    response.headers.remove('Contact');
    expect(grantedExpiry(response, 'sip:parla-trunk@192.0.2.1:5060')).toBe(600);
  });
});

function setupRequest(): SipRequest {
  const t = setup({ auth: false });
  t.registration.start();
  return t.last();
}
