import { describe, expect, it } from 'vitest';
import {
  SipDialogLayer,
  type DialogEndReason,
  type IncomingInvite,
} from '../../../src/transports/sip/dialog-layer.js';
import type { SipDialog } from '../../../src/transports/sip/dialog.js';
import {
  createResponse,
  getCSeq,
  type SipMessage,
  type SipRequest,
  type SipResponse,
} from '../../../src/transports/sip/message.js';
import type { ServerTransaction } from '../../../src/transports/sip/server-transactions.js';
import type { SipSource } from '../../../src/transports/sip/transport.js';
import { ManualScheduler } from './support/manual-scheduler.js';
import { sip } from './support/messages.js';
import { RecordingTransport } from './support/recording-transport.js';

const SOURCE: SipSource = { transport: 'UDP', address: '198.51.100.7', port: 5070 };

function invite(options: { branch?: string; extra?: string; cseq?: number } = {}): SipRequest {
  return sip(`
INVITE sip:parla@192.0.2.1 SIP/2.0
Via: SIP/2.0/UDP 198.51.100.7:5070;branch=${options.branch ?? 'z9hG4bK-inv-1'}
Max-Forwards: 70
Record-Route: <sip:203.0.113.5;lr>, <sip:203.0.113.6;lr>
From: "Alice" <sip:alice@example.com>;tag=alice1
To: <sip:parla@example.com>
Call-ID: dialog-1@example.com
CSeq: ${options.cseq ?? 10} INVITE
Contact: <sip:alice@198.51.100.7:5070>
${options.extra ?? 'Allow: INVITE, ACK, BYE'}
Content-Type: application/sdp

v=0
o=- 1 1 IN IP4 198.51.100.7
s=-
c=IN IP4 198.51.100.7
t=0 0
m=audio 4000 RTP/AVP 0
`) as SipRequest;
}

/** An in-dialog request from Alice to the dialog `dialog`. */
function inDialog(
  method: string,
  cseq: number,
  dialog: SipDialog,
  branch: string,
  toTag?: string,
): SipRequest {
  return sip(`
${method} sip:parla@192.0.2.1:5060 SIP/2.0
Via: SIP/2.0/UDP 198.51.100.7:5070;branch=${branch}
Max-Forwards: 70
From: "Alice" <sip:alice@example.com>;tag=alice1
To: <sip:parla@example.com>;tag=${toTag ?? dialog.localTag}
Call-ID: dialog-1@example.com
CSeq: ${cseq} ${method}
Contact: <sip:alice@198.51.100.9:5070>
Content-Length: 0
`) as SipRequest;
}

function setup(options: { sessionMinSeconds?: number; reliable?: boolean } = {}) {
  const scheduler = new ManualScheduler();
  const transport = new RecordingTransport(options.reliable === true ? 'TCP' : 'UDP', scheduler);
  const invites: IncomingInvite[] = [];
  const requests: { dialog: SipDialog; request: SipRequest; transaction: ServerTransaction }[] = [];
  const ended: DialogEndReason[] = [];
  const cancelled: IncomingInvite[] = [];
  const acks: number[] = [];
  const layer = new SipDialogLayer({
    transports: [transport],
    scheduler,
    ...(options.sessionMinSeconds === undefined
      ? {}
      : { sessionTimer: { minSeconds: options.sessionMinSeconds } }),
    onInvite: (incoming) => invites.push(incoming),
    onDialogRequest: (dialog, request, transaction) =>
      requests.push({ dialog, request, transaction }),
    onDialogEnded: (_dialog, reason) => ended.push(reason),
    onCancel: (incoming) => cancelled.push(incoming),
    onAck: (_dialog, ack) => acks.push(getCSeq(ack)!.seq),
  });
  const sent = (filter: (message: SipMessage) => boolean) =>
    transport.sent.filter((entry) => filter(entry.message));
  const responses = (status: number) =>
    sent((m) => m.kind === 'response' && m.status === status).map((e) => e.message as SipResponse);
  const requestsSent = (method: string) =>
    sent((m) => m.kind === 'request' && m.method === method).map((e) => e.message as SipRequest);
  const receive = (message: SipMessage) => layer.receive(message, SOURCE);
  const answer = (request = invite()): SipDialog => {
    receive(request);
    const incoming = invites.at(-1)!;
    const dialog = layer.accept(incoming, { body: Buffer.from('v=0\r\n') });
    expect(dialog).toBeDefined();
    return dialog!;
  };
  /** An ACK for the 2xx with CSeq `seq`. */
  const ack = (dialog: SipDialog, seq: number, branch = 'z9hG4bK-ack-1') => {
    const message = inDialog('ACK', seq, dialog, branch);
    message.headers.set('CSeq', `${seq} ACK`);
    receive(message);
  };
  return {
    scheduler,
    transport,
    layer,
    invites,
    requests,
    ended,
    cancelled,
    acks,
    responses,
    requestsSent,
    receive,
    answer,
    ack,
  };
}

describe('SIP dialogs (RFC 3261 §12)', () => {
  it('creates a UAS dialog from INVITE/2xx: tags, route set, remote target, CSeq', () => {
    const t = setup();
    const dialog = t.answer();
    expect(dialog).toMatchObject({
      role: 'uas',
      state: 'confirmed',
      callId: 'dialog-1@example.com',
      remoteTag: 'alice1',
      remoteTarget: 'sip:alice@198.51.100.7:5070',
      routeSet: ['<sip:203.0.113.5;lr>', '<sip:203.0.113.6;lr>'],
      remoteSeq: 10,
    });
    const ok = t.responses(200)[0]!;
    expect(ok.headers.get('To')).toBe(`<sip:parla@example.com>;tag=${dialog.localTag}`);
    expect(ok.headers.getAll('Record-Route')).toEqual(dialog.routeSet);
    expect(ok.headers.get('Contact')).toBe('<sip:parla@192.0.2.1:5060>');
    expect(ok.body.toString()).toBe('v=0\r\n');
    expect(t.layer.find('dialog-1@example.com', dialog.localTag, 'alice1')).toBe(dialog);
  });

  it('retransmits the 2xx at T1, doubling to T2, until the ACK', () => {
    const t = setup();
    const dialog = t.answer();
    t.scheduler.advance(8000);
    expect(t.transport.times((m) => m.kind === 'response' && m.status === 200)).toEqual([
      0, 500, 1500, 3500, 7500,
    ]);
    t.ack(dialog, 10);
    t.scheduler.advance(60_000);
    expect(t.responses(200)).toHaveLength(5);
    expect(t.acks).toEqual([10]);
    expect(t.ended).toEqual([]);
  });

  it('gives up after 64·T1 without an ACK and sends a BYE', () => {
    const t = setup();
    t.answer();
    t.scheduler.advance(40_000);
    const times = t.transport.times((m) => m.kind === 'response' && m.status === 200);
    expect(times.slice(0, 8)).toEqual([0, 500, 1500, 3500, 7500, 11_500, 15_500, 19_500]);
    expect(times.at(-1)).toBeLessThan(32_000);
    expect(t.ended).toEqual(['ack-timeout']);
    const bye = t.requestsSent('BYE')[0]!;
    // The BYE leaves at 64·T1 (and is retransmitted by its own transaction after that).
    expect(t.transport.times((m) => m.kind === 'request' && m.method === 'BYE')[0]).toBe(32_000);
    expect(bye.uri).toBe('sip:alice@198.51.100.7:5070');
    expect(t.transport.sent.find((e) => e.message === bye)!.target).toMatchObject({
      address: '203.0.113.5',
      port: 5060,
    });
  });

  it('does not retransmit over TCP but still waits 64·T1 for the ACK', () => {
    const t = setup({ reliable: true });
    t.layer.receive(invite(), { ...SOURCE, transport: 'TCP' });
    t.layer.accept(t.invites[0]!);
    t.scheduler.advance(31_000);
    expect(t.responses(200)).toHaveLength(1);
    t.scheduler.advance(1000);
    expect(t.ended).toEqual(['ack-timeout']);
  });

  it('builds in-dialog requests with the route set and rising CSeq; strict routes too', () => {
    const t = setup();
    const dialog = t.answer();
    const bye = dialog.createRequest('BYE');
    const info = dialog.createRequest('INFO', {
      body: Buffer.from('Signal=5\r\nDuration=160\r\n'),
      contentType: 'application/dtmf-relay',
    });
    expect(bye.uri).toBe('sip:alice@198.51.100.7:5070');
    expect(bye.headers.getAll('Route')).toEqual(['<sip:203.0.113.5;lr>', '<sip:203.0.113.6;lr>']);
    expect(bye.headers.get('From')).toBe(`<sip:parla@example.com>;tag=${dialog.localTag}`);
    expect(bye.headers.get('To')).toBe('"Alice" <sip:alice@example.com>;tag=alice1');
    expect(getCSeq(info)!.seq).toBe(getCSeq(bye)!.seq + 1);
    expect(info.headers.get('Content-Type')).toBe('application/dtmf-relay');
    expect(bye.headers.has('Contact')).toBe(false);
    expect(dialog.createRequest('REFER').headers.get('Contact')).toBe(dialog.localContact);

    const strict = setup();
    const strictInvite = invite();
    strictInvite.headers.set('Record-Route', '<sip:203.0.113.9>');
    const strictDialog = strict.answer(strictInvite);
    const request = strictDialog.createRequest('BYE');
    expect(request.uri).toBe('sip:203.0.113.9');
    expect(request.headers.getAll('Route')).toEqual(['<sip:alice@198.51.100.7:5070>']);
  });

  it('ends the dialog on a BYE, answers 481 for unknown dialogs and 500 out of order', () => {
    const t = setup();
    const dialog = t.answer();
    t.ack(dialog, 10);
    t.receive(inDialog('BYE', 11, dialog, 'z9hG4bK-bye-x', 'nosuchtag'));
    expect(t.responses(481)).toHaveLength(1);
    t.receive(inDialog('INFO', 9, dialog, 'z9hG4bK-info-old'));
    expect(t.responses(500)).toHaveLength(1);
    t.receive(inDialog('BYE', 12, dialog, 'z9hG4bK-bye-1'));
    expect(t.ended).toEqual(['remote-bye']);
    expect(dialog.state).toBe('terminated');
    expect(t.responses(200).at(-1)!.headers.get('CSeq')).toBe('12 BYE');
    t.receive(inDialog('BYE', 13, dialog, 'z9hG4bK-bye-2'));
    expect(t.responses(481)).toHaveLength(2);
  });

  it('hands re-INVITE, INFO, REFER and OPTIONS to the TU and retransmits a re-INVITE 2xx', () => {
    const t = setup();
    const dialog = t.answer();
    t.ack(dialog, 10);
    t.receive(inDialog('INFO', 11, dialog, 'z9hG4bK-info-1'));
    t.receive(inDialog('REFER', 12, dialog, 'z9hG4bK-refer-1'));
    t.receive(inDialog('OPTIONS', 13, dialog, 'z9hG4bK-opt-1'));
    t.receive(inDialog('INVITE', 14, dialog, 'z9hG4bK-reinv-1'));
    expect(t.requests.map((r) => r.request.method)).toEqual(['INFO', 'REFER', 'OPTIONS', 'INVITE']);
    expect(dialog.remoteTarget).toBe('sip:alice@198.51.100.9:5070'); // target refresh
    const reinvite = t.requests[3]!;
    t.layer.respond(dialog, reinvite.request, reinvite.transaction, 200, {
      body: Buffer.from('v=0\r\n'),
    });
    const start = t.scheduler.nowMs;
    t.scheduler.advance(1600);
    expect(
      t.transport.times(
        (m) => m.kind === 'response' && m.headers.get('CSeq') === '14 INVITE' && m.status === 200,
      ),
    ).toEqual([start, start + 500, start + 1500]);
    t.ack(dialog, 14, 'z9hG4bK-ack-14');
    t.scheduler.advance(10_000);
    expect(
      t.transport.times(
        (m) => m.kind === 'response' && m.status === 200 && m.headers.get('CSeq') === '14 INVITE',
      ),
    ).toHaveLength(3);
  });

  it('sends in-dialog requests and ACKs the 2xx of its re-INVITE', async () => {
    const t = setup();
    const dialog = t.answer();
    t.ack(dialog, 10);
    const pending = t.layer.request(dialog, 'INVITE', { body: Buffer.from('v=0\r\n') });
    const reinvite = t.requestsSent('INVITE')[0]!;
    expect(reinvite.headers.get('Contact')).toBe(dialog.localContact);
    const ok = createResponse(reinvite, 200);
    ok.headers.append('Contact', '<sip:alice@198.51.100.20:5070>');
    t.receive(ok);
    const response = await pending;
    expect(response.status).toBe(200);
    const ack = t.requestsSent('ACK')[0]!;
    expect(ack.headers.get('CSeq')).toBe(`${getCSeq(reinvite)!.seq} ACK`);
    expect(ack.uri).toBe('sip:alice@198.51.100.20:5070');

    const info = t.layer.request(dialog, 'INFO');
    t.scheduler.advance(40_000); // no answer: timer F
    expect((await info).status).toBe(408);
    expect(t.ended).toEqual(['remote-bye']);
  });

  it('answers 487 to a cancelled INVITE and tells the TU', () => {
    const t = setup();
    t.receive(invite());
    const cancel = sip(`
CANCEL sip:parla@192.0.2.1 SIP/2.0
Via: SIP/2.0/UDP 198.51.100.7:5070;branch=z9hG4bK-inv-1
Max-Forwards: 70
From: "Alice" <sip:alice@example.com>;tag=alice1
To: <sip:parla@example.com>
Call-ID: dialog-1@example.com
CSeq: 10 CANCEL
Content-Length: 0
`);
    t.receive(cancel);
    expect(t.cancelled).toHaveLength(1);
    const terminated = t.responses(487)[0]!;
    expect(terminated.headers.get('To')).toBe(
      `<sip:parla@example.com>;tag=${t.invites[0]!.localTag}`,
    );
  });
});

describe('session timers (RFC 4028)', () => {
  it('answers 422 with Min-SE when Session-Expires is too small', () => {
    const t = setup();
    t.receive(invite({ extra: 'Supported: timer\nSession-Expires: 60' }));
    expect(t.layer.accept(t.invites[0]!)).toBeUndefined();
    expect(t.responses(422)[0]!.headers.get('Min-SE')).toBe('90');
  });

  it('refreshes at half the interval when we are the refresher, with UPDATE when allowed', async () => {
    const t = setup();
    const dialog = t.answer(
      invite({
        extra:
          'Supported: timer\nSession-Expires: 600;refresher=uas\nAllow: INVITE, ACK, BYE, UPDATE',
      }),
    );
    t.ack(dialog, 10);
    const ok = t.responses(200)[0]!;
    expect(ok.headers.get('Session-Expires')).toBe('600;refresher=uas');
    expect(ok.headers.get('Require')).toBe('timer');
    t.scheduler.advance(299_000);
    expect(t.requestsSent('UPDATE')).toHaveLength(0);
    t.scheduler.advance(1000);
    const update = t.requestsSent('UPDATE')[0]!;
    // In the refresh we are the UAC, and we stay the refresher (RFC 4028 §7.4).
    expect(update.headers.get('Session-Expires')).toBe('600;refresher=uac');
    t.receive(createResponse(update, 200));
    await new Promise((resolve) => setImmediate(resolve)); // the refresh's answer is awaited
    t.scheduler.advance(300_000);
    expect(t.requestsSent('UPDATE')).toHaveLength(2);
  });

  it('sends a BYE when the peer, as refresher, lets the session expire, and not when it refreshes', () => {
    const t = setup();
    const dialog = t.answer(invite({ extra: 'Supported: timer\nSession-Expires: 300' }));
    t.ack(dialog, 10);
    expect(t.responses(200)[0]!.headers.get('Session-Expires')).toBe('300;refresher=uac');
    t.scheduler.advance(150_000);
    const refresh = inDialog('UPDATE', 11, dialog, 'z9hG4bK-upd-1');
    refresh.headers.append('Session-Expires', '300;refresher=uac').append('Supported', 'timer');
    t.receive(refresh);
    const request = t.requests[0]!;
    t.layer.respond(dialog, request.request, request.transaction, 200);
    t.scheduler.advance(200_000); // 350 s in: past the first deadline, not the refreshed one
    expect(t.ended).toEqual([]);
    t.scheduler.advance(100_000); // 150 + 300 − 32 = 418 s
    expect(t.ended).toEqual(['session-expired']);
    expect(new Set(t.requestsSent('BYE').map((bye) => bye.headers.get('CSeq'))).size).toBe(1);
  });

  it('runs no timer when the peer neither asks nor supports it', () => {
    const t = setup();
    t.answer();
    expect(t.responses(200)[0]!.headers.has('Session-Expires')).toBe(false);
  });
});
