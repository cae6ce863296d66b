/**
 * Session timers (RFC 4028) and the outbound proxy on dialogs we create with an INVITE, on a
 * virtual clock: the test plays the trunk.
 */
import { describe, expect, it } from 'vitest';
import { SipDialogLayer, type DialogEndReason } from '../../../src/transports/sip/dialog-layer.js';
import type { OutgoingInviteOptions } from '../../../src/transports/sip/dialog-uac.js';
import {
  createResponse,
  type SipRequest,
  type SipResponse,
} from '../../../src/transports/sip/message.js';
import type { SipSource } from '../../../src/transports/sip/transport.js';
import { ManualScheduler } from './support/manual-scheduler.js';
import { sip } from './support/messages.js';
import { RecordingTransport } from './support/recording-transport.js';

const TRUNK: SipSource = { transport: 'UDP', address: '203.0.113.10', port: 5060 };
const OFFER = Buffer.from('v=0\r\no=parla 1 1 IN IP4 192.0.2.1\r\n');

function setup(extra: Partial<OutgoingInviteOptions> = {}) {
  const scheduler = new ManualScheduler();
  const transport = new RecordingTransport('UDP', scheduler);
  const ended: DialogEndReason[] = [];
  const layer = new SipDialogLayer({
    transports: [transport],
    scheduler,
    onInvite: () => {},
    onDialogRequest: (dialog, request, transaction) =>
      layer.respond(dialog, request, transaction, 200),
    onDialogEnded: (_dialog, reason) => ended.push(reason),
  });
  const call = layer.invite({
    target: { transport: 'UDP', address: TRUNK.address, port: TRUNK.port },
    requestUri: 'sip:15550123@trunk.example.com',
    from: '<sip:15550100@192.0.2.1>',
    to: '<sip:15550123@trunk.example.com>',
    body: OFFER,
    ...extra,
  });
  const sent = (method: string): SipRequest[] =>
    transport.sent
      .map((entry) => entry.message)
      .filter((m): m is SipRequest => m.kind === 'request' && m.method === method);
  /** The callee answers our INVITE 200 with `headers` (no Record-Route). */
  const answer = async (headers: [string, string][]): Promise<void> => {
    const ok = createResponse(sent('INVITE')[0]!, 200, { toTag: 'callee1' });
    ok.headers.append('Contact', '<sip:callee@203.0.113.20:5062>');
    headers.forEach(([name, value]) => ok.headers.append(name, value));
    layer.receive(ok, TRUNK);
    const result = await call.result;
    expect(result.ok).toBe(true);
  };
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return { scheduler, transport, layer, ended, sent, answer, settle };
}

describe('session timers on dialogs we create (RFC 4028 §7)', () => {
  it('asks for a session timer in the INVITE', () => {
    const invite = setup().sent('INVITE')[0]!;
    expect(invite.headers.get('Supported')).toBe('timer');
    expect(invite.headers.get('Session-Expires')).toBe('1800');
    expect(invite.headers.get('Min-SE')).toBe('90');
  });

  it('refreshes by re-INVITE with our SDP at half the interval when the 2xx makes us refresher', async () => {
    const t = setup();
    await t.answer([['Session-Expires', '90;refresher=uac']]);
    t.scheduler.advance(44_999);
    expect(t.sent('INVITE')).toHaveLength(1);
    t.scheduler.advance(1);
    const refresh = t.sent('INVITE')[1]!;
    expect(refresh.uri).toBe('sip:callee@203.0.113.20:5062');
    expect(refresh.headers.get('CSeq')).toBe('2 INVITE');
    expect(refresh.headers.get('Session-Expires')).toBe('90;refresher=uac');
    expect(refresh.body.equals(OFFER)).toBe(true);
    const ok = createResponse(refresh, 200, { toTag: 'callee1' });
    ok.headers.append('Session-Expires', '90;refresher=uac');
    t.layer.receive(ok, TRUNK);
    await t.settle();
    expect(t.sent('ACK').at(-1)!.headers.get('CSeq')).toBe('2 ACK');
    // The refresh restarted the interval: the next one comes 45 s later, and no BYE.
    t.scheduler.advance(45_000);
    expect(t.sent('INVITE')).toHaveLength(3);
    expect(t.sent('BYE')).toHaveLength(0);
    expect(t.ended).toEqual([]);
  });

  it('refreshes with UPDATE when the peer allows it', async () => {
    const t = setup();
    await t.answer([
      ['Session-Expires', '120;refresher=uac'],
      ['Allow', 'INVITE, ACK, BYE, UPDATE'],
    ]);
    t.scheduler.advance(60_000);
    const update = t.sent('UPDATE')[0]!;
    expect(update.headers.get('Session-Expires')).toBe('120;refresher=uac');
    expect(update.body.length).toBe(0);
  });

  it('ends the session with session-expired when the peer, as refresher, never refreshes', async () => {
    const t = setup();
    await t.answer([['Session-Expires', '90;refresher=uas']]);
    // A refresh from the peer at 50 s restarts the wait: expiry is then 50 + 90 − 30 s.
    t.scheduler.advance(50_000);
    const reinvite = sip(`
INVITE sip:parla@192.0.2.1:5060 SIP/2.0
Via: SIP/2.0/UDP 203.0.113.10:5060;branch=z9hG4bK-peer-refresh
Max-Forwards: 70
From: <sip:15550123@trunk.example.com>;tag=callee1
To: ${t.sent('INVITE')[0]!.headers.get('From')}
Call-ID: ${t.sent('INVITE')[0]!.headers.get('Call-ID')}
CSeq: 5 INVITE
Contact: <sip:callee@203.0.113.20:5062>
Supported: timer
Session-Expires: 90;refresher=uac
Content-Length: 0
`);
    t.layer.receive(reinvite, TRUNK);
    const ok = t.transport.sent.at(-1)!.message as SipResponse;
    expect([ok.status, ok.headers.get('Session-Expires')]).toEqual([200, '90;refresher=uac']);
    const ack = sip(`
ACK sip:parla@192.0.2.1:5060 SIP/2.0
Via: SIP/2.0/UDP 203.0.113.10:5060;branch=z9hG4bK-peer-refresh-ack
Max-Forwards: 70
From: <sip:15550123@trunk.example.com>;tag=callee1
To: ${t.sent('INVITE')[0]!.headers.get('From')}
Call-ID: ${t.sent('INVITE')[0]!.headers.get('Call-ID')}
CSeq: 5 ACK
Content-Length: 0
`);
    t.layer.receive(ack, TRUNK);
    t.scheduler.advance(59_999);
    expect(t.sent('BYE')).toHaveLength(0);
    t.scheduler.advance(1);
    expect(t.sent('BYE')).toHaveLength(1);
    expect(t.ended).toEqual(['session-expired']);
  });

  it('runs no timer when the 2xx has no Session-Expires', async () => {
    const t = setup();
    await t.answer([]);
    t.scheduler.advance(3_600_000);
    expect(t.sent('INVITE')).toHaveLength(1);
    expect(t.sent('BYE')).toHaveLength(0);
  });
});

describe('dialogs placed through an outbound proxy (RFC 3261 §8.1.2)', () => {
  it('sends the INVITE, ACK and in-dialog requests to the proxy with its Route', async () => {
    const proxy = { transport: 'UDP' as const, address: '198.51.100.9', port: 5070 };
    const t = setup({ target: proxy, outboundProxy: '<sip:proxy.example.com:5070;lr>' });
    const invite = t.transport.sent[0]!;
    expect(invite.target).toMatchObject({ address: '198.51.100.9', port: 5070 });
    expect((invite.message as SipRequest).uri).toBe('sip:15550123@trunk.example.com');
    expect(invite.message.headers.getAll('Route')).toEqual(['<sip:proxy.example.com:5070;lr>']);
    await t.answer([]);
    const ack = t.transport.sent.find((entry) => (entry.message as SipRequest).method === 'ACK')!;
    expect(ack.target).toMatchObject({ address: '198.51.100.9', port: 5070 });
    expect((ack.message as SipRequest).uri).toBe('sip:callee@203.0.113.20:5062');
    expect(ack.message.headers.getAll('Route')).toEqual(['<sip:proxy.example.com:5070;lr>']);
  });
});
