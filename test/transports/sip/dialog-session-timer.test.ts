import { describe, expect, it } from 'vitest';
import { readInfoDtmf } from '../../../src/transports/sip/dialog-info-dtmf.js';
import { SipDialog } from '../../../src/transports/sip/dialog.js';
import type { SipRequest, SipResponse } from '../../../src/transports/sip/message.js';
import {
  SessionTimer,
  negotiateUasSessionTimer,
  parseSessionExpires,
} from '../../../src/transports/sip/session-timer.js';
import { ManualScheduler } from './support/manual-scheduler.js';
import { sip } from './support/messages.js';

function request(extra: string, method = 'INVITE', body = ''): SipRequest {
  return sip(`
${method} sip:parla@192.0.2.1 SIP/2.0
Via: SIP/2.0/UDP 198.51.100.7:5070;branch=z9hG4bK-st-1
Max-Forwards: 70
From: <sip:alice@example.com>;tag=a1
To: <sip:parla@example.com>
Call-ID: st-1@example.com
CSeq: 1 ${method}
Contact: <sip:alice@198.51.100.7:5070>
${extra}

${body}`) as SipRequest;
}

describe('Session-Expires negotiation (RFC 4028 §9)', () => {
  it('parses Session-Expires with and without a refresher', () => {
    expect(parseSessionExpires('1800')).toEqual({ deltaSeconds: 1800 });
    expect(parseSessionExpires('1800 ; refresher=UAS')).toEqual({
      deltaSeconds: 1800,
      refresher: 'uas',
    });
    expect(parseSessionExpires('abc')).toBeNull();
    expect(parseSessionExpires('90;refresher=proxy')).toBeNull();
  });

  it('decides per the request: 422, the peer refresher, ours, or none', () => {
    expect(negotiateUasSessionTimer(request('Session-Expires: 89'))).toEqual({
      kind: 'reject',
      status: 422,
      headers: [['Min-SE', '90']],
    });
    expect(
      negotiateUasSessionTimer(request('Session-Expires: 100'), { minSeconds: 120 }),
    ).toMatchObject({ kind: 'reject', headers: [['Min-SE', '120']] });
    // Supported: timer without a refresher: the UAC refreshes, and Require: timer is added.
    expect(negotiateUasSessionTimer(request('Supported: timer\nSession-Expires: 900'))).toEqual({
      kind: 'timer',
      intervalSeconds: 900,
      refresher: 'uac',
      headers: [
        ['Session-Expires', '900;refresher=uac'],
        ['Require', 'timer'],
      ],
    });
    // A proxy asked for a timer but the UAC does not support it: we refresh, no Require.
    expect(negotiateUasSessionTimer(request('Session-Expires: 900;refresher=uac'))).toEqual({
      kind: 'timer',
      intervalSeconds: 900,
      refresher: 'uas',
      headers: [['Session-Expires', '900;refresher=uas']],
    });
    // Supported but not asked: we propose our default, at least the peer's Min-SE.
    expect(
      negotiateUasSessionTimer(request('Supported: timer\nMin-SE: 3600'), { defaultSeconds: 1800 }),
    ).toMatchObject({ kind: 'timer', intervalSeconds: 3600, refresher: 'uac' });
    expect(negotiateUasSessionTimer(request('Allow: INVITE'))).toEqual({ kind: 'none' });
  });

  it('fires refresh at half the interval, or expiry at interval − min(32 s, interval/3)', () => {
    const scheduler = new ScheduledLog();
    const refresher = new SessionTimer(scheduler.scheduler, scheduler.handlers, 90, true);
    refresher.start();
    scheduler.scheduler.advance(45_000);
    expect(scheduler.log).toEqual(['refresh@45000']);
    const watcher = new SessionTimer(scheduler.scheduler, scheduler.handlers, 90, false);
    watcher.start(); // at 45 s: expiry at 45 + 90 − 30
    scheduler.scheduler.advance(200_000);
    expect(scheduler.log).toEqual(['refresh@45000', 'expired@105000']);
  });
});

class ScheduledLog {
  readonly scheduler = new ManualScheduler();
  readonly log: string[] = [];
  readonly handlers = {
    onRefreshDue: () => this.log.push(`refresh@${this.scheduler.nowMs}`),
    onExpired: () => this.log.push(`expired@${this.scheduler.nowMs}`),
  };
}

describe('UAC dialogs and INFO DTMF', () => {
  it('creates a UAC dialog from our INVITE and its 2xx with the route set reversed', () => {
    const invite = request('Content-Length: 0');
    const ok = sip(`
SIP/2.0 200 OK
Via: SIP/2.0/UDP 198.51.100.7:5070;branch=z9hG4bK-st-1
Record-Route: <sip:p1.example.com;lr>, <sip:203.0.113.1;lr>
From: <sip:alice@example.com>;tag=a1
To: <sip:parla@example.com>;tag=b2
Call-ID: st-1@example.com
CSeq: 1 INVITE
Contact: <sip:bob@203.0.113.50:5080;transport=tcp>
Content-Length: 0
`) as SipResponse;
    const dialog = SipDialog.asUac(invite, ok, {
      localContact: '<sip:parla@192.0.2.1>',
      transport: 'UDP',
    })!;
    expect(dialog.routeSet).toEqual(['<sip:203.0.113.1;lr>', '<sip:p1.example.com;lr>']);
    expect(dialog).toMatchObject({
      localTag: 'a1',
      remoteTag: 'b2',
      localSeq: 1,
      state: 'confirmed',
    });
    expect(dialog.nextHop()).toEqual({ transport: 'UDP', address: '203.0.113.1', port: 5060 });
    const ack = dialog.createAck(1);
    expect(ack.headers.get('CSeq')).toBe('1 ACK');
    expect(dialog.createRequest('BYE').headers.get('CSeq')).toBe('2 BYE');
  });

  it('reads DTMF from INFO bodies in the dtmf-relay and dtmf formats', () => {
    const relay = request(
      'Content-Type: application/dtmf-relay',
      'INFO',
      'Signal=5\r\nDuration=160\r\n',
    );
    expect(readInfoDtmf(relay)).toEqual({ digit: '5', durationMs: 160 });
    expect(
      readInfoDtmf(request('Content-Type: application/dtmf-relay', 'INFO', 'Signal=11')),
    ).toEqual({
      digit: '#',
    });
    expect(readInfoDtmf(request('Content-Type: application/dtmf', 'INFO', '*'))).toEqual({
      digit: '*',
    });
    expect(
      readInfoDtmf(request('Content-Type: application/dtmf-relay', 'INFO', 'Signal=X')),
    ).toBeUndefined();
    expect(readInfoDtmf(request('Content-Type: text/plain', 'INFO', '5'))).toBeUndefined();
  });
});
