import { describe, expect, it } from 'vitest';
import {
  ENDED_REASON_BUSY,
  ENDED_REASON_FAILED,
  ENDED_REASON_NO_ANSWER,
  failureReason,
  outboundAttempts,
  shouldTryNextGateway,
} from '../../src/calls/sip-outbound-plan.js';
import { dialWithDigest } from '../../src/calls/sip-outbound-dial.js';
import { dialledUser } from '../../src/calls/sip-outbound-trunk.js';
import { SipDialogLayer } from '../../src/transports/sip/dialog-layer.js';
import {
  parseDigestCredentials,
  verifyDigestCredentials,
} from '../../src/transports/sip/digest.js';
import { createResponse, type SipRequest } from '../../src/transports/sip/message.js';
import type { SipSource } from '../../src/transports/sip/transport.js';
import { ManualScheduler } from '../transports/sip/support/manual-scheduler.js';
import { RecordingTransport } from '../transports/sip/support/recording-transport.js';

const TRUNK: SipSource = { transport: 'UDP', address: '203.0.113.10', port: 5060 };
const REQUEST_URI = 'sip:15550123@203.0.113.10:5060';

function setup(password = 'pw') {
  const scheduler = new ManualScheduler();
  const transport = new RecordingTransport('UDP', scheduler);
  const layer = new SipDialogLayer({
    transports: [transport],
    scheduler,
    onInvite: () => {},
    onDialogRequest: () => {},
  });
  const progress: number[] = [];
  const dial = dialWithDigest(
    (options, onProgress) => layer.invite(options, onProgress),
    {
      target: { transport: 'UDP', address: TRUNK.address, port: TRUNK.port },
      requestUri: REQUEST_URI,
      from: '<sip:15550100@203.0.113.10>',
      to: `<${REQUEST_URI}>`,
      body: Buffer.from('v=0\r\n'),
    },
    { username: 'parla', password },
    (response) => progress.push(response.status),
  );
  const sent = (method: string): SipRequest[] =>
    transport.sent
      .map((entry) => entry.message)
      .filter((m): m is SipRequest => m.kind === 'request' && m.method === method);
  /** Replies to the latest INVITE, then lets the dialler send its retry. */
  const reply = async (status: number, headers: [string, string][] = []): Promise<void> => {
    const invite = sent('INVITE').at(-1)!;
    const response = createResponse(invite, status, { toTag: `t${status}` });
    headers.forEach(([name, value]) => response.headers.append(name, value));
    layer.receive(response, TRUNK);
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { dial, sent, reply, progress };
}

describe('dialWithDigest', () => {
  it('answers a 407 and then a 401 on the same Call-ID with rising CSeq, and ACKs the 2xx', async () => {
    const t = setup();
    await t.reply(407, [['Proxy-Authenticate', 'Digest realm="proxy", nonce="p1", qop="auth"']]);
    await t.reply(401, [
      ['WWW-Authenticate', 'Digest realm="trunk", nonce="t1", algorithm=SHA-256'],
    ]);
    await t.reply(180);
    const invites = t.sent('INVITE');
    expect(invites).toHaveLength(3);
    expect(invites.map((invite) => invite.headers.get('CSeq'))).toEqual([
      '1 INVITE',
      '2 INVITE',
      '3 INVITE',
    ]);
    expect(new Set(invites.map((invite) => invite.headers.get('Call-ID'))).size).toBe(1);
    expect(new Set(invites.map((invite) => invite.headers.get('From'))).size).toBe(1);
    const proxyAuth = parseDigestCredentials(invites[2]!.headers.get('Proxy-Authorization')!)!;
    const trunkAuth = parseDigestCredentials(invites[2]!.headers.get('Authorization')!)!;
    expect(proxyAuth).toMatchObject({ realm: 'proxy', uri: REQUEST_URI, qop: 'auth' });
    expect(trunkAuth).toMatchObject({ realm: 'trunk', algorithm: 'SHA-256' });
    expect(verifyDigestCredentials(proxyAuth, 'INVITE', 'pw')).toBe(true);
    expect(verifyDigestCredentials(trunkAuth, 'INVITE', 'pw')).toBe(true);
    await t.reply(200, [['Contact', '<sip:callee@203.0.113.10:5060>']]);
    const result = await t.dial.result;
    expect(result.ok).toBe(true);
    expect(t.progress).toEqual([180]);
    // Two ACKs for the challenges (in their transactions), then the 2xx ACK with CSeq 3.
    expect(t.sent('ACK').map((ack) => ack.headers.get('CSeq'))).toEqual([
      '1 ACK',
      '2 ACK',
      '3 ACK',
    ]);
  });

  it('gives up when the same challenge comes back (wrong password)', async () => {
    const t = setup('wrong');
    const challenge: [string, string] = ['WWW-Authenticate', 'Digest realm="trunk", nonce="n"'];
    await t.reply(401, [challenge]);
    await t.reply(401, [challenge]);
    const result = await t.dial.result;
    expect(result).toMatchObject({ ok: false, status: 401, authFailed: true });
    expect(t.sent('INVITE')).toHaveLength(2);
  });

  it('tries once more for a stale nonce', async () => {
    const t = setup();
    await t.reply(401, [['WWW-Authenticate', 'Digest realm="trunk", nonce="n1"']]);
    await t.reply(401, [['WWW-Authenticate', 'Digest realm="trunk", nonce="n2", stale=true']]);
    await t.reply(486);
    expect(await t.dial.result).toMatchObject({ ok: false, status: 486 });
    expect(t.sent('INVITE')).toHaveLength(3);
  });
});

describe('422 Session Interval Too Small (RFC 4028 §7.4)', () => {
  it('retries once with the Min-SE it names, on the same Call-ID', async () => {
    const t = setup();
    expect(t.sent('INVITE')[0]!.headers.get('Session-Expires')).toBe('1800');
    await t.reply(422, [['Min-SE', '3600']]);
    const retry = t.sent('INVITE')[1]!;
    expect(retry.headers.get('CSeq')).toBe('2 INVITE');
    expect(retry.headers.get('Call-ID')).toBe(t.sent('INVITE')[0]!.headers.get('Call-ID'));
    expect([retry.headers.get('Session-Expires'), retry.headers.get('Min-SE')]).toEqual([
      '3600',
      '3600',
    ]);
    // A second 422 (or one without Min-SE) ends the dial.
    await t.reply(422, [['Min-SE', '7200']]);
    expect(await t.dial.result).toMatchObject({ ok: false, status: 422 });
    expect(t.sent('INVITE')).toHaveLength(2);
  });

  it('does not retry a 422 without Min-SE', async () => {
    const t = setup();
    await t.reply(422);
    expect(await t.dial.result).toMatchObject({ ok: false, status: 422 });
    expect(t.sent('INVITE')).toHaveLength(1);
  });
});

describe('outbound attempts', () => {
  const gateway = (host: string, address: string) => ({
    host,
    port: 5060,
    target: { transport: 'UDP' as const, address, port: 5060 },
  });
  const gateways = [
    gateway('gw1.example.com', '192.0.2.1'),
    gateway('gw2.example.com', '192.0.2.2'),
  ];
  const trunk = { ...gateways[0]!, gateways, leadingPlus: false };

  it('walks the gateways, each through the outbound proxy when there is one', () => {
    expect(outboundAttempts(trunk, { number: '+15550123' })).toEqual([
      { target: gateways[0]!.target, requestUri: 'sip:15550123@gw1.example.com:5060' },
      { target: gateways[1]!.target, requestUri: 'sip:15550123@gw2.example.com:5060' },
    ]);
    const proxy = {
      target: { transport: 'TCP' as const, address: '198.51.100.9', port: 5070 },
      route: '<sip:proxy.example.com:5070;transport=tcp;lr>',
    };
    const viaProxy = outboundAttempts({ ...trunk, outboundProxy: proxy }, { number: '+15550123' });
    expect(viaProxy).toEqual([
      {
        target: proxy.target,
        outboundProxy: proxy.route,
        requestUri: 'sip:15550123@gw1.example.com:5060',
      },
      {
        target: proxy.target,
        outboundProxy: proxy.route,
        requestUri: 'sip:15550123@gw2.example.com:5060',
      },
    ]);
  });
});

describe('outbound call outcomes', () => {
  const failed = (status: number) => ({ ok: false as const, status });
  it.each([
    [486, false, true, ENDED_REASON_BUSY],
    [600, false, true, ENDED_REASON_BUSY],
    [603, false, true, ENDED_REASON_BUSY],
    [480, false, true, ENDED_REASON_NO_ANSWER],
    [487, true, true, ENDED_REASON_NO_ANSWER],
    [408, false, true, ENDED_REASON_NO_ANSWER],
    [408, false, false, ENDED_REASON_FAILED],
    [403, false, false, ENDED_REASON_FAILED],
    [503, false, false, ENDED_REASON_FAILED],
  ])('%i (ring timeout %s, rang %s) ends with %s', (status, timedOut, rang, reason) => {
    expect(failureReason(failed(status), timedOut, rang)).toBe(reason);
  });

  it('tries the next gateway only when the gateway failed before any ringing', () => {
    expect(shouldTryNextGateway(failed(503), false)).toBe(true);
    expect(shouldTryNextGateway(failed(500), false)).toBe(true);
    expect(shouldTryNextGateway(failed(408), false)).toBe(true);
    expect(shouldTryNextGateway(failed(503), true)).toBe(false);
    expect(shouldTryNextGateway(failed(486), false)).toBe(false);
    expect(shouldTryNextGateway(failed(403), false)).toBe(false);
    expect(shouldTryNextGateway(failed(600), false)).toBe(false);
  });

  it('dials numbers with or without the leading plus', () => {
    expect(dialledUser('+1 (555) 010-0000', false)).toBe('15550100000');
    expect(dialledUser('+15550100000', true)).toBe('+15550100000');
    expect(dialledUser('15550100000', true)).toBe('+15550100000');
    expect(dialledUser('alice', true)).toBe('alice');
  });
});
