/**
 * The harness's SIP user agent client against a scripted UDP peer: INVITE retransmission until
 * a response, the ACK of a 2xx (again for a retransmitted 2xx), the ACK of a failure on the
 * INVITE's branch, BYE, and giving up when the call is closed mid-INVITE.
 */
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { HarnessError } from '../../bench/harness/caller-transport.js';
import { SipUac } from '../../bench/harness/sip-uac.js';
import { SipHeaders } from '../../src/transports/sip/headers.js';
import { getTopVia, type SipRequest } from '../../src/transports/sip/message.js';
import { parseSipMessage } from '../../src/transports/sip/parser.js';
import { serializeSipMessage } from '../../src/transports/sip/serializer.js';

interface Peer {
  socket: Socket;
  port: number;
  requests: SipRequest[];
  respond(request: SipRequest, status: number, reason: string, body?: string): void;
}

const peers: Socket[] = [];
afterEach(() => {
  for (const socket of peers.splice(0)) {
    socket.close();
  }
});

/** A UDP peer that calls `script` for each request it receives. */
async function peer(script: (request: SipRequest, p: Peer) => void): Promise<Peer> {
  const socket = createSocket('udp4');
  peers.push(socket);
  let last: RemoteInfo | null = null;
  const p: Peer = {
    socket,
    port: 0,
    requests: [],
    respond: (request, status, reason, body = '') => {
      const headers = new SipHeaders();
      for (const name of ['Via', 'From', 'Call-ID', 'CSeq']) {
        headers.append(name, request.headers.get(name)!);
      }
      headers.append('To', `${request.headers.get('To')!};tag=uas1`);
      headers.append('Contact', `<sip:parla@127.0.0.1:${p.port}>`);
      if (body !== '') {
        headers.append('Content-Type', 'application/sdp');
      }
      const bytes = serializeSipMessage({
        kind: 'response',
        status,
        reason,
        headers,
        body: Buffer.from(body),
      });
      socket.send(bytes, last!.port, last!.address);
    },
  };
  socket.on('message', (data, source) => {
    last = source;
    const parsed = parseSipMessage(data);
    if (parsed.ok && parsed.message.kind === 'request') {
      p.requests.push(parsed.message);
      script(parsed.message, p);
    }
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  p.port = socket.address().port;
  return p;
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  expect(check()).toBe(true);
}

const methods = (p: Peer): string[] => p.requests.map((r) => r.method);

describe('SipUac', () => {
  it('retransmits the INVITE, ACKs the 2xx and its retransmission, and sends BYE', async () => {
    let invites = 0;
    const p = await peer((request, self) => {
      if (request.method === 'INVITE' && ++invites === 2) {
        self.respond(request, 100, 'Trying');
        self.respond(request, 200, 'OK', 'v=0 answer');
        setTimeout(() => self.respond(request, 200, 'OK', 'v=0 answer'), 50);
      } else if (request.method === 'BYE') {
        self.respond(request, 200, 'OK');
      }
    });
    const uac = await SipUac.open({
      serverHost: '127.0.0.1',
      serverPort: p.port,
      number: '+15550100',
      fromUser: '+19990001',
    });
    expect(await uac.invite('v=0 offer')).toBe('v=0 answer');
    await until(() => methods(p).filter((m) => m === 'ACK').length === 2);
    await uac.close();
    // The first INVITE went unanswered (a loaded machine may add more retransmissions).
    expect(methods(p).filter((m) => m === 'INVITE').length).toBeGreaterThanOrEqual(2);
    expect(methods(p).filter((m) => m !== 'INVITE')).toEqual(['ACK', 'ACK', 'BYE']);
    const byMethod = (method: string): SipRequest => p.requests.find((r) => r.method === method)!;
    const [invite, ack, bye] = [byMethod('INVITE'), byMethod('ACK'), byMethod('BYE')];
    expect(invite.uri).toBe(`sip:+15550100@127.0.0.1:${p.port}`);
    expect(invite.body.toString()).toBe('v=0 offer');
    // The 2xx's ACK and the BYE go to its Contact, with its To tag, on branches of their own.
    expect(ack.uri).toBe(`sip:parla@127.0.0.1:${p.port}`);
    expect(ack.headers.get('To')).toMatch(/;tag=uas1$/);
    expect(ack.headers.get('CSeq')).toBe('1 ACK');
    expect(bye.headers.get('CSeq')).toBe('2 BYE');
    expect(getTopVia(ack)!.params.get('branch')).not.toBe(getTopVia(invite)!.params.get('branch'));
  });

  it('ACKs a failure on the INVITE branch and rejects with a clear error', async () => {
    const p = await peer((request, self) => {
      if (request.method === 'INVITE') {
        self.respond(request, 486, 'Busy Here');
      }
    });
    const uac = await SipUac.open({
      serverHost: '127.0.0.1',
      serverPort: p.port,
      number: '123',
      fromUser: '456',
    });
    const error = await uac.invite('v=0').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HarnessError);
    expect(error).toMatchObject({
      code: 'ERR_BENCH_CONNECT',
      message: 'INVITE answered 486 Busy Here',
    });
    await until(() => methods(p).includes('ACK'));
    const [invite, ack] = p.requests;
    expect(getTopVia(ack!)!.params.get('branch')).toBe(getTopVia(invite!)!.params.get('branch'));
    await uac.close();
    expect(methods(p)).toEqual(['INVITE', 'ACK']);
  });

  it('gives up an unanswered INVITE when closed, without a BYE', async () => {
    const p = await peer(() => undefined);
    const uac = await SipUac.open({
      serverHost: '127.0.0.1',
      serverPort: p.port,
      number: '123',
      fromUser: '456',
    });
    const pending = uac.invite('v=0').catch((e: unknown) => e);
    await until(() => p.requests.length > 0);
    await uac.close();
    expect(await pending).toMatchObject({ code: 'ERR_BENCH_TIMEOUT' });
    expect(methods(p).every((m) => m === 'INVITE')).toBe(true);
  });

  it('refuses a host name or a number with letters', async () => {
    const options = { serverHost: '127.0.0.1', serverPort: 5060, number: '1', fromUser: '2' };
    await expect(SipUac.open({ ...options, serverHost: 'parla.example' })).rejects.toThrow(
      HarnessError,
    );
    await expect(SipUac.open({ ...options, number: 'bob' })).rejects.toThrow(HarnessError);
  });
});
