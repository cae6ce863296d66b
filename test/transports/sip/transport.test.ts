import { createSocket } from 'node:dgram';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createResponse, getTopVia, type SipMessage } from '../../../src/transports/sip/message.js';
import { parseSipMessage } from '../../../src/transports/sip/parser.js';
import { serializeSipMessage } from '../../../src/transports/sip/serializer.js';
import { SipStreamFramer } from '../../../src/transports/sip/stream-framer.js';
import {
  responseTarget,
  stampReceived,
  type SipSource,
} from '../../../src/transports/sip/transport.js';
import { SipTcpTransport } from '../../../src/transports/sip/transport-tcp.js';
import { SipUdpTransport } from '../../../src/transports/sip/transport-udp.js';
import { request } from './support/messages.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) {
    await close();
  }
});

function options(
  branch: string,
  via = `SIP/2.0/UDP 203.0.113.5:5099;branch=${branch};rport`,
): Buffer {
  return serializeSipMessage(request('OPTIONS', { via, branch }));
}

/** Waits until `check` returns a value, polling; fails after `timeoutMs`. */
async function eventually<T>(check: () => T | undefined, timeoutMs = 5_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = check();
    if (value !== undefined) {
      return value;
    }
    if (Date.now() - start > timeoutMs) {
      throw new Error('timed out waiting');
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('Via stamping and response routing (§18.2.1, §18.2.2, RFC 3581)', () => {
  const source: SipSource = { transport: 'UDP', address: '198.51.100.20', port: 40000 };

  it('adds received when the sent-by host differs, and rport when asked', () => {
    const plain = request('OPTIONS', { via: 'SIP/2.0/UDP pc.example.com:5070;branch=z9hG4bK1' });
    stampReceived(plain, source);
    expect(plain.headers.getAll('Via')[0]).toBe(
      'SIP/2.0/UDP pc.example.com:5070;branch=z9hG4bK1;received=198.51.100.20',
    );
    expect(responseTarget(plain)).toEqual({ address: '198.51.100.20', port: 5070 });
    const nat = request('OPTIONS', { via: 'SIP/2.0/UDP 198.51.100.20:5070;rport;branch=z9hG4bK2' });
    stampReceived(nat, source);
    expect(getTopVia(nat)!.params.get('rport')).toBe('40000');
    expect(getTopVia(nat)!.params.get('received')).toBe('198.51.100.20');
    expect(responseTarget(nat)).toEqual({ address: '198.51.100.20', port: 40000 });
    const same = request('OPTIONS', { via: 'SIP/2.0/UDP 198.51.100.20;branch=z9hG4bK3' });
    stampReceived(same, source);
    expect(getTopVia(same)!.params.has('received')).toBe(false);
    expect(responseTarget(same)).toEqual({ address: '198.51.100.20', port: 5060 });
  });

  it('stamps only the first Via value of a combined line', () => {
    const two = request('OPTIONS', {
      via: 'SIP/2.0/UDP a.example.com;branch=z9hG4bKa, SIP/2.0/UDP b.example.com;branch=z9hG4bKb',
    });
    stampReceived(two, source);
    expect(two.headers.getAll('Via')).toEqual([
      'SIP/2.0/UDP a.example.com;branch=z9hG4bKa;received=198.51.100.20',
      'SIP/2.0/UDP b.example.com;branch=z9hG4bKb',
    ]);
  });
});

describe('SipStreamFramer', () => {
  it('splits by Content-Length across arbitrary chunk boundaries, with keep-alives between', () => {
    const one = options('z9hG4bK-s1');
    const withBody = request('MESSAGE', { branch: 'z9hG4bK-s2' });
    const bodyMessage = serializeSipMessage({
      ...withBody,
      body: Buffer.from('hello\r\n\r\nworld'),
    });
    const stream = Buffer.concat([
      Buffer.from('\r\n\r\n'),
      one,
      Buffer.from('\r\n'),
      bodyMessage,
      one,
    ]);
    for (const chunkBytes of [1, 7, 64, stream.length]) {
      const framer = new SipStreamFramer();
      const kinds: string[] = [];
      const bodies: string[] = [];
      for (let offset = 0; offset < stream.length; offset += chunkBytes) {
        for (const event of framer.push(stream.subarray(offset, offset + chunkBytes))) {
          kinds.push(event.kind);
          if (event.kind === 'message') {
            const parsed = parseSipMessage(event.data, { stream: true });
            bodies.push(parsed.ok ? parsed.message.body.toString() : parsed.code);
          }
        }
      }
      expect(kinds, `chunks of ${chunkBytes}`).toEqual(['ping', 'message', 'message', 'message']);
      expect(bodies).toEqual(['', 'hello\r\n\r\nworld', '']);
      expect(framer.bufferedBytes).toBe(0);
    }
  });

  it('ends the stream on a missing Content-Length or an oversized message', () => {
    const framer = new SipStreamFramer();
    const noLength = Buffer.from(
      serializeSipMessage(request('OPTIONS'))
        .toString()
        .replace(/Content-Length: 0\r\n/, ''),
    );
    const events = framer.push(Buffer.concat([noLength, options('z9hG4bK-after')]));
    expect(events.map((event) => event.kind === 'message' && event.last)).toEqual([true]);
    expect(framer.push(options('z9hG4bK-more'))).toEqual([]);
    const small = new SipStreamFramer({
      maxMessageBytes: 200,
      maxHeaderCount: 64,
      maxLineChars: 1000,
    });
    expect(small.push(Buffer.alloc(300, 'a')).map((event) => event.kind)).toEqual(['error']);
  });
});

describe('SipUdpTransport', () => {
  it('delivers requests with received/rport stamped and answers malformed ones with 400', async () => {
    const received: { message: SipMessage; source: SipSource }[] = [];
    const transport = await SipUdpTransport.listen({
      host: '127.0.0.1',
      port: 0,
      onMessage: (message, source) => received.push({ message, source }),
    });
    closers.push(() => transport.close());
    const client = createSocket('udp4');
    closers.push(() => new Promise((resolve) => client.close(() => resolve())));
    const replies: Buffer[] = [];
    client.on('message', (data) => replies.push(data));
    await new Promise<void>((resolve) => client.bind(0, '127.0.0.1', () => resolve()));
    client.send(options('z9hG4bK-u1'), transport.port, '127.0.0.1');
    const first = await eventually(() => received[0]);
    const via = getTopVia(first.message)!;
    expect(via.params.get('received')).toBe('127.0.0.1');
    expect(via.params.get('rport')).toBe(String(client.address().port));
    // The response goes to the source port (rport), not the 5099 in sent-by.
    transport.send(createResponse(first.message, 200), responseTarget(first.message));
    const okReply = await eventually(() => replies[0]);
    const parsed = parseSipMessage(okReply);
    expect(parsed.ok && parsed.message.kind === 'response' && parsed.message.status).toBe(200);

    const broken = options('z9hG4bK-u2').toString().replace('CSeq: 1 OPTIONS', 'CSeq: 1 INVITE');
    client.send(Buffer.from(broken), transport.port, '127.0.0.1');
    client.send(
      Buffer.from('\x00\xff garbage that cannot be answered'),
      transport.port,
      '127.0.0.1',
    );
    const rejection = await eventually(() => replies[1]);
    const rejected = parseSipMessage(rejection);
    expect(rejected.ok && rejected.message.kind === 'response' && rejected.message.status).toBe(
      400,
    );
    expect(rejected.ok && rejected.message.headers.get('Warning')).toMatch(/^399 127\.0\.0\.1 "/);
    await eventually(() => (transport.stats.parseErrors === 2 ? true : undefined));
    expect(transport.stats).toMatchObject({ messagesIn: 1, rejectionsAnswered: 1 });
    expect(received).toHaveLength(1);
  });
});

describe('SipTcpTransport', () => {
  async function openClient(port: number) {
    const socket: Socket = connect(port, '127.0.0.1');
    closers.push(() => {
      socket.destroy();
      return Promise.resolve();
    });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    return { socket, text: () => Buffer.concat(chunks).toString() };
  }

  it('frames a stream, answers keep-alive pings, replies on the same connection', async () => {
    const received: { message: SipMessage; source: SipSource }[] = [];
    const transport = await SipTcpTransport.listen({
      host: '127.0.0.1',
      port: 0,
      onMessage: (message, source) => received.push({ message, source }),
    });
    closers.push(() => transport.close());
    const client = await openClient(transport.port);
    const two = Buffer.concat([
      options('z9hG4bK-t1'),
      Buffer.from('\r\n\r\n'),
      options('z9hG4bK-t2'),
    ]);
    client.socket.write(two.subarray(0, 50));
    client.socket.write(two.subarray(50));
    await eventually(() => received[1]);
    expect(received.map((entry) => getTopVia(entry.message)!.params.get('branch'))).toEqual([
      'z9hG4bK-t1',
      'z9hG4bK-t2',
    ]);
    expect(await eventually(() => (client.text() === '\r\n' ? true : undefined))).toBe(true);
    const first = received[0]!;
    expect(first.source.connectionId).toBeDefined();
    transport.send(createResponse(first.message, 200), responseTarget(first.message, first.source));
    const text = await eventually(() =>
      client.text().includes('SIP/2.0 200') ? client.text() : undefined,
    );
    expect(text).toMatch(/branch=z9hG4bK-t1/);
  });

  it('answers a request without Content-Length with 400 and closes the connection', async () => {
    const transport = await SipTcpTransport.listen({
      host: '127.0.0.1',
      port: 0,
      onMessage: () => {},
    });
    closers.push(() => transport.close());
    const client = await openClient(transport.port);
    const closed = new Promise<void>((resolve) => client.socket.once('close', () => resolve()));
    client.socket.write(
      options('z9hG4bK-t3')
        .toString()
        .replace(/Content-Length: 0\r\n/, ''),
    );
    await closed;
    expect(client.text()).toMatch(/^SIP\/2\.0 400 Bad Request\r\n/);
    expect(transport.stats.rejectionsAnswered).toBe(1);
  });

  it('refuses connections over its limit and opens outbound connections on send', async () => {
    const inbox: SipMessage[] = [];
    const server = await SipTcpTransport.listen({
      host: '127.0.0.1',
      port: 0,
      maxConnections: 1,
      onMessage: (message) => inbox.push(message),
    });
    closers.push(() => server.close());
    const client = await SipTcpTransport.listen({
      host: '127.0.0.1',
      port: 0,
      onMessage: () => {},
    });
    closers.push(() => client.close());
    client.send(request('OPTIONS', { branch: 'z9hG4bK-out' }), {
      address: '127.0.0.1',
      port: server.port,
    });
    await eventually(() => inbox[0]);
    expect(server.connectionCount).toBe(1);
    const extra = connect(server.port, '127.0.0.1');
    closers.push(() => {
      extra.destroy();
      return Promise.resolve();
    });
    await new Promise<void>((resolve) => extra.once('close', () => resolve()));
    expect(server.connectionCount).toBe(1);
  });
});
