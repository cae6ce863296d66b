import { describe, expect, it } from 'vitest';
import { SipDialogLayer, type DialogEndReason } from '../../../src/transports/sip/dialog-layer.js';
import {
  createResponse,
  getCSeq,
  type SipRequest,
  type SipResponse,
} from '../../../src/transports/sip/message.js';
import type { SipSource } from '../../../src/transports/sip/transport.js';
import { ManualScheduler } from './support/manual-scheduler.js';
import { sip } from './support/messages.js';
import { RecordingTransport } from './support/recording-transport.js';

const TRUNK: SipSource = { transport: 'UDP', address: '203.0.113.10', port: 5060 };

function setup() {
  const scheduler = new ManualScheduler();
  const transport = new RecordingTransport('UDP', scheduler);
  const ended: DialogEndReason[] = [];
  const layer = new SipDialogLayer({
    transports: [transport],
    scheduler,
    onInvite: () => {},
    onDialogRequest: () => {},
    onDialogEnded: (_dialog, reason) => ended.push(reason),
  });
  const sent = (method: string) =>
    transport.sent.filter((e) => e.message.kind === 'request' && e.message.method === method);
  const call = layer.invite({
    target: { transport: 'UDP', address: '203.0.113.10', port: 5060 },
    requestUri: 'sip:+15550123@203.0.113.10',
    from: '"Parla" <sip:+15550100@192.0.2.1>',
    to: '<sip:+15550123@203.0.113.10>',
    body: Buffer.from('v=0\r\n'),
  });
  return { scheduler, transport, layer, ended, sent, call };
}

/** The callee's response to our INVITE with its To tag, Contact and Record-Route. */
function answer(invite: SipRequest, status: number, toTag = 'callee1'): SipResponse {
  const response = createResponse(invite, status, { toTag });
  if (status >= 200 && status < 300) {
    response.headers
      .append('Record-Route', '<sip:203.0.113.10;lr>')
      .append('Contact', '<sip:callee@203.0.113.20:5062>');
  }
  return response;
}

describe('UAC dialogs in the dialog layer', () => {
  it('sends an INVITE, creates the dialog from the 2xx, ACKs it and re-ACKs retransmissions', async () => {
    const t = setup();
    const invite = t.sent('INVITE')[0]!.message as SipRequest;
    expect(invite.headers.get('From')).toMatch(/^"Parla" <sip:\+15550100@192\.0\.2\.1>;tag=\w+$/);
    expect(invite.headers.get('CSeq')).toBe('1 INVITE');
    expect(invite.headers.get('Contact')).toBe('<sip:parla@192.0.2.1:5060>');
    expect(invite.headers.get('Content-Type')).toBe('application/sdp');
    t.layer.receive(answer(invite, 180), TRUNK);
    const ok = answer(invite, 200);
    t.layer.receive(ok, TRUNK);
    const result = await t.call.result;
    expect(result.ok).toBe(true);
    if (!result.ok) {
      return;
    }
    expect(result.dialog).toMatchObject({
      role: 'uac',
      remoteTag: 'callee1',
      remoteTarget: 'sip:callee@203.0.113.20:5062',
      routeSet: ['<sip:203.0.113.10;lr>'],
    });
    const acks = t.sent('ACK');
    expect(acks).toHaveLength(1);
    expect(acks[0]!.message.headers.get('CSeq')).toBe('1 ACK');
    expect((acks[0]!.message as SipRequest).uri).toBe('sip:callee@203.0.113.20:5062');
    expect(acks[0]!.target).toMatchObject({ address: '203.0.113.10', port: 5060 });
    t.layer.receive(ok, TRUNK); // the ACK was lost: the callee resends its 2xx
    expect(t.sent('ACK')).toHaveLength(2);
    t.scheduler.advance(40_000); // past timer M: a 2xx now arrives as a stray response
    t.layer.receive(ok, TRUNK);
    expect(t.sent('ACK')).toHaveLength(3);

    // The callee hangs up: its BYE matches our dialog.
    const bye = sip(`
BYE sip:parla@192.0.2.1:5060 SIP/2.0
Via: SIP/2.0/UDP 203.0.113.10:5060;branch=z9hG4bK-callee-bye
Max-Forwards: 70
From: ${invite.headers.get('To')};tag=callee1
To: ${invite.headers.get('From')}
Call-ID: ${invite.headers.get('Call-ID')}
CSeq: 7 BYE
Content-Length: 0
`);
    t.layer.receive(bye, TRUNK);
    expect(t.ended).toEqual(['remote-bye']);
    const byeOk = t.transport.sent.at(-1)!.message as SipResponse;
    expect([byeOk.status, getCSeq(byeOk)!.method]).toEqual([200, 'BYE']);
  });

  it('ACKs and hangs up a second 2xx from another fork', async () => {
    const t = setup();
    const invite = t.sent('INVITE')[0]!.message as SipRequest;
    t.layer.receive(answer(invite, 200, 'fork-a'), TRUNK);
    t.layer.receive(answer(invite, 200, 'fork-b'), TRUNK);
    const result = await t.call.result;
    expect(result.ok && result.dialog.remoteTag).toBe('fork-a');
    expect(t.sent('ACK')).toHaveLength(2);
    const byes = t.sent('BYE');
    expect(byes).toHaveLength(1);
    expect(byes[0]!.message.headers.get('To')).toContain('tag=fork-b');
    expect(t.layer.dialogCount).toBe(1);
  });

  it('reports a busy callee, a timeout, and cancels a ringing call', async () => {
    const busy = setup();
    const invite = busy.sent('INVITE')[0]!.message as SipRequest;
    busy.layer.receive(answer(invite, 486), TRUNK);
    expect(await busy.call.result).toMatchObject({ ok: false, status: 486 });

    const silent = setup();
    silent.scheduler.advance(32_000); // timer B
    expect(await silent.call.result).toEqual({ ok: false, status: 408 });

    const ringing = setup();
    const ringingInvite = ringing.sent('INVITE')[0]!.message as SipRequest;
    ringing.layer.receive(answer(ringingInvite, 180), TRUNK);
    ringing.call.cancel();
    const cancel = ringing.sent('CANCEL')[0]!.message as SipRequest;
    expect(cancel.headers.get('CSeq')).toBe('1 CANCEL');
    ringing.layer.receive(answer(ringingInvite, 487), TRUNK);
    expect(await ringing.call.result).toMatchObject({ ok: false, status: 487 });
  });
});
