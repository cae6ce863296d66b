import { describe, expect, it } from 'vitest';
import { SipDialogLayer } from '../../../src/transports/sip/dialog-layer.js';
import { SipFloodGuard } from '../../../src/transports/sip/flood-guard.js';
import type { SipRequest, SipResponse } from '../../../src/transports/sip/message.js';
import { ManualScheduler } from './support/manual-scheduler.js';
import { sip } from './support/messages.js';
import { RecordingTransport } from './support/recording-transport.js';

function clock(): { now: () => number; advance: (ms: number) => void } {
  let nowMs = 1000;
  return { now: () => nowMs, advance: (ms) => (nowMs += ms) };
}

describe('the SIP flood guard', () => {
  it('blocks a source after more than maxRejects refusals in a window', () => {
    const time = clock();
    const guard = new SipFloodGuard({
      maxRejects: 3,
      windowMs: 60_000,
      blockMs: 10_000,
      now: time.now,
    });
    for (let i = 0; i < 3; i++) {
      guard.recordReject('203.0.113.9');
    }
    expect(guard.isBlocked('203.0.113.9')).toBe(false);
    guard.recordReject('203.0.113.9');
    expect(guard.isBlocked('203.0.113.9')).toBe(true);
    expect(guard.isBlocked('::ffff:203.0.113.9')).toBe(true);
    expect(guard.isBlocked('203.0.113.10')).toBe(false);
    time.advance(10_000);
    expect(guard.isBlocked('203.0.113.9')).toBe(false);
  });

  it('allows more challenges than refusals before blocking', () => {
    const guard = new SipFloodGuard({ maxRejects: 2, maxChallenges: 5 });
    for (let i = 0; i < 5; i++) {
      guard.recordChallenge('203.0.113.20');
    }
    guard.recordReject('203.0.113.20');
    guard.recordReject('203.0.113.20');
    expect(guard.isBlocked('203.0.113.20')).toBe(false);
    guard.recordChallenge('203.0.113.20');
    expect(guard.isBlocked('203.0.113.20')).toBe(true);
  });

  it('counts refusals per window: a slow trickle is never blocked', () => {
    const time = clock();
    const guard = new SipFloodGuard({ maxRejects: 3, windowMs: 60_000, now: time.now });
    for (let i = 0; i < 20; i++) {
      guard.recordReject('198.51.100.1');
      time.advance(30_000);
    }
    expect(guard.isBlocked('198.51.100.1')).toBe(false);
  });

  it('starts a source over once it is accepted, unless it is blocked', () => {
    const time = clock();
    const guard = new SipFloodGuard({ maxRejects: 2, now: time.now });
    guard.recordReject('192.0.2.1');
    guard.recordReject('192.0.2.1');
    guard.recordAccepted('192.0.2.1');
    guard.recordReject('192.0.2.1');
    expect(guard.isBlocked('192.0.2.1')).toBe(false);
    guard.recordReject('192.0.2.1');
    guard.recordReject('192.0.2.1');
    expect(guard.isBlocked('192.0.2.1')).toBe(true);
    guard.recordAccepted('192.0.2.1');
    expect(guard.isBlocked('192.0.2.1')).toBe(true);
  });

  it('tracks at most maxSources addresses, forgetting the least recently seen', () => {
    const guard = new SipFloodGuard({ maxRejects: 1, maxSources: 100 });
    guard.recordReject('10.0.0.1');
    guard.recordReject('10.0.0.1');
    expect(guard.isBlocked('10.0.0.1')).toBe(true);
    for (let i = 0; i < 5000; i++) {
      guard.recordReject(`10.1.${i >> 8}.${i & 255}`);
      expect(guard.trackedSources).toBeLessThanOrEqual(100);
    }
    expect(guard.trackedSources).toBe(100);
    expect(guard.isBlocked('10.0.0.1')).toBe(false);
  });
});

describe('ignored sources in the dialog layer', () => {
  const request = (method: string, from: string, toTag = ''): SipRequest =>
    sip(`
${method} sip:parla@192.0.2.1 SIP/2.0
Via: SIP/2.0/UDP ${from}:5070;branch=z9hG4bK-${method}-${from}-${toTag}
Max-Forwards: 70
From: <sip:scanner@${from}>;tag=s1
To: <sip:parla@192.0.2.1>${toTag === '' ? '' : `;tag=${toTag}`}
Call-ID: flood-${from}
CSeq: 1 ${method}
Content-Length: 0
`) as SipRequest;

  it('get no answer at all, while other sources and in-dialog requests are answered', () => {
    const scheduler = new ManualScheduler();
    const transport = new RecordingTransport('UDP', scheduler);
    const invites: string[] = [];
    const layer = new SipDialogLayer({
      transports: [transport],
      scheduler,
      onInvite: (invite) => invites.push(invite.source.address),
      onDialogRequest: () => undefined,
    });
    layer.ignoreRequest = (_request, source) => source.address === '203.0.113.66';
    const from = (address: string) => ({ transport: 'UDP' as const, address, port: 5070 });
    layer.receive(request('INVITE', '203.0.113.66'), from('203.0.113.66'));
    layer.receive(request('OPTIONS', '203.0.113.66'), from('203.0.113.66'));
    expect(transport.sent).toEqual([]);
    expect(invites).toEqual([]);
    layer.receive(request('OPTIONS', '198.51.100.7'), from('198.51.100.7'));
    // An in-dialog request is never dropped by the filter (here: no such dialog, 481).
    layer.receive(request('BYE', '203.0.113.66', 'nosuchtag'), from('203.0.113.66'));
    expect(transport.sent.map((entry) => (entry.message as SipResponse).status)).toEqual([
      200, 481,
    ]);
    layer.close();
  });
});
