import { describe, expect, it } from 'vitest';
import type { ClientTransactionUser } from '../../../src/transports/sip/client-transactions.js';
import {
  getCSeq,
  getTo,
  getTopVia,
  type SipMessage,
  type SipRequest,
  type SipResponse,
} from '../../../src/transports/sip/message.js';
import type { ServerTransaction } from '../../../src/transports/sip/server-transactions.js';
import { SipTransactionLayer } from '../../../src/transports/sip/transaction-layer.js';
import type { SipSource } from '../../../src/transports/sip/transport.js';
import { ManualScheduler } from './support/manual-scheduler.js';
import { ackFor, reply, request } from './support/messages.js';
import { RecordingTransport } from './support/recording-transport.js';

const PEER: SipSource = { transport: 'UDP', address: '198.51.100.7', port: 5070 };
const TARGET = { transport: 'UDP' as const, address: '198.51.100.7', port: 5070 };

function setup(name: 'UDP' | 'TCP' = 'UDP') {
  const clock = new ManualScheduler();
  const transport = new RecordingTransport(name, clock);
  const requests: { request: SipRequest; transaction: ServerTransaction }[] = [];
  const acks: SipRequest[] = [];
  const strays: SipResponse[] = [];
  const layer = new SipTransactionLayer({
    transports: [transport],
    scheduler: clock,
    onRequest: (received, transaction) => requests.push({ request: received, transaction }),
    onAck: (ack) => acks.push(ack),
    onStrayResponse: (response) => strays.push(response),
  });
  return { clock, transport, layer, requests, acks, strays };
}

function recordingUser() {
  const events: string[] = [];
  const user: ClientTransactionUser = {
    onResponse: (response) => events.push(String(response.status)),
    onTimeout: () => events.push('timeout'),
    onTransportError: (error) => events.push(`error:${error.message}`),
  };
  return { events, user };
}

const isMethod = (method: string) => (message: SipMessage) =>
  message.kind === 'request' && message.method === method;
const isStatus = (status: number) => (message: SipMessage) =>
  message.kind === 'response' && message.status === status;

/** The response a peer would send to our request (same Via, so it matches). */
function answer(sent: SipMessage, status: number): SipResponse {
  return reply(sent as SipRequest, status);
}

describe('INVITE client transaction (§17.1.1)', () => {
  it('retransmits on timer A (T1 doubling) and times out on timer B (64·T1)', () => {
    const { clock, transport, layer } = setup();
    const { events, user } = recordingUser();
    const tx = layer.sendRequest(request('INVITE'), TARGET, user);
    expect(getTopVia(tx.request)!.params.get('branch')).toMatch(/^z9hG4bK/);
    expect(tx.runningTimers).toEqual(['A', 'B']);
    clock.advance(40_000);
    expect(transport.times(isMethod('INVITE'))).toEqual([0, 500, 1500, 3500, 7500, 15500, 31500]);
    expect(events).toEqual(['timeout']);
    expect(tx.state).toBe('terminated');
    expect(layer.clientTransactionCount).toBe(0);
  });

  it('stops retransmitting on a provisional, ACKs a non-2xx itself and absorbs repeats until timer D', () => {
    const { clock, transport, layer } = setup();
    const { events, user } = recordingUser();
    const tx = layer.sendRequest(request('INVITE'), TARGET, user);
    clock.advance(100);
    layer.receive(answer(tx.request, 180), PEER);
    clock.advance(10_000);
    expect(transport.times(isMethod('INVITE'))).toEqual([0]);
    const busy = answer(tx.request, 486);
    layer.receive(busy, PEER);
    layer.receive(busy, PEER);
    expect(events).toEqual(['180', '486']);
    const acks = transport.sent.filter((entry) => isMethod('ACK')(entry.message));
    expect(acks).toHaveLength(2);
    const ack = acks[0]!.message as SipRequest;
    expect(ack.uri).toBe(tx.request.uri);
    expect(getCSeq(ack)).toEqual({ seq: 1, method: 'ACK' });
    expect(getTo(ack)!.params.get('tag')).toBe('to1');
    expect(ack.headers.getAll('Via')).toEqual([tx.request.headers.getAll('Via')[0]]);
    expect(tx.state).toBe('completed');
    clock.advance(31_999);
    expect(tx.state).toBe('completed');
    clock.advance(1);
    expect(tx.state).toBe('terminated');
  });

  it('passes a 2xx and its retransmissions to the TU until timer M (RFC 6026)', () => {
    const { clock, layer, strays } = setup();
    const { events, user } = recordingUser();
    const tx = layer.sendRequest(request('INVITE'), TARGET, user);
    const ok = answer(tx.request, 200);
    layer.receive(ok, PEER);
    layer.receive(ok, PEER);
    expect(events).toEqual(['200', '200']);
    expect(tx.state).toBe('accepted');
    clock.advance(32_000);
    expect(tx.state).toBe('terminated');
    layer.receive(ok, PEER);
    expect(strays).toHaveLength(1);
  });

  it('over TCP sends once and ends at once after a non-2xx (timer D is zero)', () => {
    const { clock, transport, layer } = setup('TCP');
    const { user } = recordingUser();
    const tx = layer.sendRequest(request('INVITE'), { ...TARGET, transport: 'TCP' }, user);
    expect(tx.runningTimers).toEqual(['B']);
    clock.advance(5_000);
    layer.receive(answer(tx.request, 503), PEER);
    expect(tx.state).toBe('terminated');
    expect(transport.times(isMethod('INVITE'))).toEqual([0]);
    expect(transport.times(isMethod('ACK'))).toEqual([5_000]);
  });

  it('reports a transport error and terminates', () => {
    const { transport, layer } = setup();
    const { events, user } = recordingUser();
    transport.failNext = new Error('unreachable');
    const tx = layer.sendRequest(request('INVITE'), TARGET, user);
    expect(events).toEqual(['error:unreachable']);
    expect(tx.state).toBe('terminated');
  });
});

describe('non-INVITE client transaction (§17.1.2)', () => {
  it('retransmits on timer E capped at T2 and times out on timer F', () => {
    const { clock, transport, layer } = setup();
    const { events, user } = recordingUser();
    layer.sendRequest(request('OPTIONS'), TARGET, user);
    clock.advance(33_000);
    expect(transport.times(isMethod('OPTIONS'))).toEqual([
      0, 500, 1500, 3500, 7500, 11500, 15500, 19500, 23500, 27500, 31500,
    ]);
    expect(events).toEqual(['timeout']);
  });

  it('retransmits every T2 once a provisional came; keeps the final for timer K (T4)', () => {
    const { clock, transport, layer } = setup();
    const { events, user } = recordingUser();
    const tx = layer.sendRequest(request('BYE'), TARGET, user);
    clock.advance(600);
    layer.receive(answer(tx.request, 100), PEER);
    clock.advance(9_000);
    expect(transport.times(isMethod('BYE'))).toEqual([0, 500, 1500, 5500, 9500]);
    const ok = answer(tx.request, 200);
    layer.receive(ok, PEER);
    layer.receive(ok, PEER);
    expect(events).toEqual(['100', '200']);
    expect(tx.state).toBe('completed');
    clock.advance(5_000);
    expect(tx.state).toBe('terminated');
  });

  it('matches responses by branch and CSeq method (§17.1.3)', () => {
    const { layer, strays } = setup();
    const { events, user } = recordingUser();
    const tx = layer.sendRequest(request('OPTIONS'), TARGET, user);
    const otherBranch = answer(tx.request, 200);
    otherBranch.headers.set('Via', 'SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bK-other');
    const otherMethod = answer(tx.request, 200);
    otherMethod.headers.set('CSeq', '1 INFO');
    const notOurs = answer(tx.request, 200);
    notOurs.headers.set('Via', 'SIP/2.0/UDP 203.0.113.1:5060;branch=z9hG4bK-other');
    layer.receive(otherBranch, PEER);
    layer.receive(otherMethod, PEER);
    layer.receive(notOurs, PEER);
    expect(events).toEqual([]);
    // §18.1.2: the one whose sent-by is not ours is dropped without reaching the TU.
    expect(strays).toEqual([otherBranch, otherMethod]);
  });
});

describe('INVITE server transaction (§17.2.1)', () => {
  it('sends 100 Trying, resends the last provisional on a retransmitted INVITE', () => {
    const { transport, layer, requests } = setup();
    const invite = request('INVITE');
    layer.receive(invite, PEER);
    expect(requests).toHaveLength(1);
    expect(transport.sent.map((entry) => (entry.message as SipResponse).status)).toEqual([100]);
    requests[0]!.transaction.respond(reply(invite, 180));
    layer.receive(request('INVITE'), PEER);
    expect(requests).toHaveLength(1);
    expect(transport.sent.map((entry) => (entry.message as SipResponse).status)).toEqual([
      100, 180, 180,
    ]);
    expect(transport.sent[0]!.target).toEqual({ address: '198.51.100.7', port: 5070 });
  });

  it('retransmits a non-2xx on timer G until the ACK, then absorbs ACKs for timer I', () => {
    const { clock, transport, layer, requests, acks } = setup();
    const invite = request('INVITE');
    layer.receive(invite, PEER);
    const tx = requests[0]!.transaction;
    tx.respond(reply(invite, 486));
    clock.advance(12_000);
    expect(transport.times(isStatus(486))).toEqual([0, 500, 1500, 3500, 7500, 11500]);
    layer.receive(ackFor(invite), PEER);
    expect(tx.state).toBe('confirmed');
    layer.receive(ackFor(invite), PEER);
    clock.advance(30_000);
    expect(transport.times(isStatus(486))).toHaveLength(6);
    expect(acks).toEqual([]);
    expect(tx.state).toBe('terminated');
  });

  it('gives up on timer H without an ACK', () => {
    const { clock, layer, requests } = setup();
    const invite = request('INVITE');
    layer.receive(invite, PEER);
    const tx = requests[0]!.transaction;
    let timedOut = false;
    tx.events = { onTimeout: () => (timedOut = true) };
    tx.respond(reply(invite, 480));
    clock.advance(31_999);
    expect(timedOut).toBe(false);
    clock.advance(1);
    expect(timedOut).toBe(true);
    expect(layer.serverTransactionCount).toBe(0);
  });

  it('after a 2xx absorbs INVITE retransmissions until timer L and hands the ACK to the TU', () => {
    const { clock, transport, layer, requests, acks } = setup();
    const invite = request('INVITE');
    layer.receive(invite, PEER);
    const tx = requests[0]!.transaction;
    tx.respond(reply(invite, 200));
    expect(tx.state).toBe('accepted');
    layer.receive(request('INVITE'), PEER);
    expect(transport.sent).toHaveLength(2);
    tx.respond(reply(invite, 200));
    expect(transport.sent).toHaveLength(3);
    const ack = request('ACK', { branch: 'z9hG4bK-ack-2xx' });
    layer.receive(ack, PEER);
    expect(acks).toEqual([ack]);
    clock.advance(32_000);
    expect(tx.state).toBe('terminated');
    expect(requests).toHaveLength(1);
  });
});

describe('non-INVITE server transaction (§17.2.2)', () => {
  it('absorbs retransmissions while Trying, answers them with the final, ends on timer J', () => {
    const { clock, transport, layer, requests } = setup();
    const options = request('OPTIONS');
    layer.receive(options, PEER);
    layer.receive(request('OPTIONS'), PEER);
    expect(transport.sent).toHaveLength(0);
    const tx = requests[0]!.transaction;
    tx.respond(reply(options, 200));
    layer.receive(request('OPTIONS'), PEER);
    expect(transport.times(isStatus(200))).toEqual([0, 0]);
    clock.advance(32_000);
    expect(tx.state).toBe('terminated');
    layer.receive(request('OPTIONS'), PEER);
    expect(requests).toHaveLength(2);
  });

  it('over TCP ends at once after the final response (timer J is zero)', () => {
    const { layer, requests } = setup('TCP');
    const options = request('OPTIONS');
    layer.receive(options, { ...PEER, transport: 'TCP', connectionId: 3 });
    const tx = requests[0]!.transaction;
    tx.respond(reply(options, 200));
    expect(tx.state).toBe('terminated');
  });

  it('tells RFC 2543 retransmissions (no magic cookie) from new requests', () => {
    const { layer, requests } = setup();
    const old = request('OPTIONS', { via: 'SIP/2.0/UDP 198.51.100.7:5070' });
    layer.receive(old, PEER);
    layer.receive(request('OPTIONS', { via: 'SIP/2.0/UDP 198.51.100.7:5070' }), PEER);
    layer.receive(
      request('OPTIONS', { via: 'SIP/2.0/UDP 198.51.100.7:5070', callId: 'other' }),
      PEER,
    );
    expect(requests).toHaveLength(2);
  });
});

describe('configured timer values', () => {
  it('scales every timer from T1, T2 and T4', () => {
    const clock = new ManualScheduler();
    const transport = new RecordingTransport('UDP', clock);
    const layer = new SipTransactionLayer({
      transports: [transport],
      scheduler: clock,
      timers: { t1Ms: 10, t2Ms: 40, t4Ms: 50, timerDMs: 100 },
      onRequest: () => {},
    });
    const { events, user } = recordingUser();
    const tx = layer.sendRequest(request('MESSAGE'), TARGET, user);
    clock.advance(639);
    expect(events).toEqual([]);
    clock.advance(1);
    expect(events).toEqual(['timeout']);
    expect(transport.times(isMethod('MESSAGE')).slice(0, 7)).toEqual([
      0, 10, 30, 70, 110, 150, 190,
    ]);
    expect(tx.state).toBe('terminated');
  });
});

describe('limits', () => {
  it('answers 503 statelessly beyond maxServerTransactions', () => {
    const clock = new ManualScheduler();
    const transport = new RecordingTransport('UDP', clock);
    let accepted = 0;
    const layer = new SipTransactionLayer({
      transports: [transport],
      scheduler: clock,
      maxServerTransactions: 2,
      onRequest: () => accepted++,
    });
    for (const branch of ['z9hG4bK-l1', 'z9hG4bK-l2', 'z9hG4bK-l3']) {
      layer.receive(request('OPTIONS', { branch }), PEER);
    }
    expect(accepted).toBe(2);
    const busy = transport.sent.at(-1)!.message as SipResponse;
    expect([busy.status, busy.headers.get('Retry-After')]).toEqual([503, '5']);
    expect(layer.serverTransactionCount).toBe(2);
  });
});

describe('CANCEL (§9)', () => {
  it('answers a matching CANCEL with 200 and the INVITE with 487, and a stray one with 481', () => {
    const { transport, layer, requests } = setup();
    const invite = request('INVITE');
    layer.receive(invite, PEER);
    layer.receive(request('CANCEL'), PEER);
    expect(requests).toHaveLength(1);
    const statuses = transport.sent.map((entry) => {
      const response = entry.message as SipResponse;
      return `${response.status} ${getCSeq(response)!.method}`;
    });
    expect(statuses).toEqual(['100 INVITE', '200 CANCEL', '487 INVITE']);
    layer.receive(request('CANCEL', { branch: 'z9hG4bK-nothing' }), PEER);
    expect((transport.sent.at(-1)!.message as SipResponse).status).toBe(481);
  });

  it('waits for a provisional before sending a CANCEL with the INVITE branch (§9.1)', () => {
    const { transport, layer } = setup();
    const { events, user } = recordingUser();
    const tx = layer.sendRequest(request('INVITE'), TARGET, user);
    const cancelEvents = recordingUser();
    layer.cancel(tx, TARGET, cancelEvents.user);
    expect(transport.sent.filter((entry) => isMethod('CANCEL')(entry.message))).toHaveLength(0);
    layer.receive(answer(tx.request, 180), PEER);
    const cancel = transport.sent.find((entry) => isMethod('CANCEL')(entry.message))!
      .message as SipRequest;
    expect(getTopVia(cancel)).toEqual(getTopVia(tx.request));
    expect(getCSeq(cancel)).toEqual({ seq: 1, method: 'CANCEL' });
    layer.receive(answer(cancel, 200), PEER);
    layer.receive(answer(tx.request, 487), PEER);
    expect(cancelEvents.events).toEqual(['200']);
    expect(events).toEqual(['180', '487']);
    expect(transport.times(isMethod('ACK'))).toHaveLength(1);
  });
});
