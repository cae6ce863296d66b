import { describe, expect, it } from 'vitest';
import {
  SipHeaders,
  canonicalHeaderName,
  isListHeader,
} from '../../../src/transports/sip/headers.js';
import { createResponse } from '../../../src/transports/sip/message.js';
import { formatNameAddr, parseNameAddr } from '../../../src/transports/sip/name-addr.js';
import { parseParams } from '../../../src/transports/sip/params.js';
import { formatUri } from '../../../src/transports/sip/uri.js';
import { formatVia, newBranch, parseVia, viaSentBy } from '../../../src/transports/sip/via.js';
import { request } from './support/messages.js';

describe('header names', () => {
  it('maps compact forms and any casing to one canonical name', () => {
    const pairs: [string, string][] = [
      ['i', 'Call-ID'],
      ['CALL-ID', 'Call-ID'],
      ['m', 'Contact'],
      ['f', 'From'],
      ['t', 'To'],
      ['v', 'Via'],
      ['l', 'Content-Length'],
      ['c', 'Content-Type'],
      ['k', 'Supported'],
      ['s', 'Subject'],
      ['e', 'Content-Encoding'],
      ['x', 'Session-Expires'],
      ['cseq', 'CSeq'],
      ['www-authenticate', 'WWW-Authenticate'],
      ['x-custom-header', 'X-Custom-Header'],
    ];
    for (const [name, canonical] of pairs) {
      expect(canonicalHeaderName(name)).toBe(canonical);
    }
    // Names that exist on every object prototype are ordinary extension headers here.
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      expect(typeof canonicalHeaderName(name)).toBe('string');
      expect(new SipHeaders([[name, 'x']]).get(name)).toBe('x');
    }
    expect(isListHeader('v')).toBe(true);
    expect(isListHeader('Authorization')).toBe(false);
  });
});

describe('SipHeaders', () => {
  it('finds fields under any spelling and splits list headers outside quotes and brackets', () => {
    const headers = new SipHeaders([
      ['v', 'SIP/2.0/UDP a.example.com;branch=z9hG4bK1, SIP/2.0/UDP b.example.com;branch=z9hG4bK2'],
      ['VIA', 'SIP/2.0/TCP c.example.com;branch=z9hG4bK3'],
      ['Contact', '"Doe, John" <sip:john@example.com;a=1,2>;q=0.5, <sip:other@example.com>'],
      ['Authorization', 'Digest username="a", realm="b", nonce="c"'],
    ]);
    expect(headers.getAll('via').map((value) => parseVia(value)!.host)).toEqual([
      'a.example.com',
      'b.example.com',
      'c.example.com',
    ]);
    expect(headers.getAll('m')).toEqual([
      '"Doe, John" <sip:john@example.com;a=1,2>;q=0.5',
      '<sip:other@example.com>',
    ]);
    expect(headers.getAll('Authorization')).toHaveLength(1);
    headers.replaceFirst('Via', 'SIP/2.0/UDP z.example.com;branch=z9hG4bK0');
    headers.removeFirst('Via');
    expect(headers.getAll('Via').map((value) => parseVia(value)!.host)).toEqual([
      'b.example.com',
      'c.example.com',
    ]);
    headers.set('contact', '<sip:only@example.com>').prepend('Route', '<sip:proxy.example.com;lr>');
    expect(headers.entries().map((field) => field.name)).toEqual([
      'Route',
      'Via',
      'Via',
      'Contact',
      'Authorization',
    ]);
    expect(headers.clone().remove('Via').has('v')).toBe(false);
    expect(headers.has('Via')).toBe(true);
  });
});

describe('Via, name-addr and params', () => {
  it('parses and formats Via with branch, received, rport', () => {
    const via = parseVia('SIP / 2.0 / udp host.example.com : 5070 ; Branch = z9hG4bKx ; rport')!;
    expect(via.transport).toBe('UDP');
    expect(viaSentBy(via)).toBe('host.example.com:5070');
    expect(formatVia(via)).toBe('SIP/2.0/UDP host.example.com:5070;branch=z9hG4bKx;rport');
    for (const bad of [
      'SIP/2.0/UDP',
      'SIP/2.0/UDP host;branch',
      'SIP/2.0/UDP host;rport=x',
      'SIP/2.0/UDP host;received=not-an-ip',
      'SIP/2.0/UDP host;ttl=300',
      'SIP/2.0 host',
    ]) {
      expect(parseVia(bad), bad).toBeNull();
    }
    expect(newBranch()).toMatch(/^z9hG4bK[A-Za-z0-9_-]{16}$/);
    expect(newBranch()).not.toBe(newBranch());
  });

  it('parses name-addr and addr-spec forms and writes them back', () => {
    const quoted = parseNameAddr(
      '"A \\"B\\" C" <sip:abc@example.com;transport=tcp>;tag=xyz;q=0.7',
    )!;
    expect(quoted.displayName).toBe('A "B" C');
    expect(quoted.params.get('tag')).toBe('xyz');
    expect(formatNameAddr(quoted)).toBe(
      '"A \\"B\\" C" <sip:abc@example.com;transport=tcp>;tag=xyz;q=0.7',
    );
    const bare = parseNameAddr('sip:abc@example.com;tag=1')!;
    expect(formatUri(bare.uri)).toBe('sip:abc@example.com');
    expect(bare.params.get('tag')).toBe('1');
    const tokens = parseNameAddr('Bob Smith <tel:+15551234>')!;
    expect([tokens.displayName, formatUri(tokens.uri)]).toEqual(['Bob Smith', 'tel:+15551234']);
    for (const bad of [
      '<sip:a@b',
      '"open <sip:a@b>',
      'Bob, Smith <sip:a@b>',
      '< sip:a@b>',
      'nothing',
    ]) {
      expect(parseNameAddr(bad), bad).toBeNull();
    }
    expect(parseParams('a=1;b;c="x;y"')).toEqual(
      new Map([
        ['a', '1'],
        ['b', null],
        ['c', '"x;y"'],
      ]),
    );
    expect(parseParams('a=1;;b')).toBeNull();
  });

  it('builds responses that copy Via, From, To, Call-ID and CSeq and add a To tag', () => {
    const invite = request('INVITE');
    invite.headers.append('Via', 'SIP/2.0/UDP proxy.example.com;branch=z9hG4bKp');
    const ringing = createResponse(invite, 180, { toTag: 'abc' });
    expect(ringing.reason).toBe('Ringing');
    expect(ringing.headers.entries().map((field) => field.name)).toEqual([
      'Via',
      'Via',
      'From',
      'To',
      'Call-ID',
      'CSeq',
    ]);
    expect(ringing.headers.get('To')).toBe('<sip:bob@example.com>;tag=abc');
    expect(createResponse(invite, 100, { toTag: 'abc' }).headers.get('To')).toBe(
      '<sip:bob@example.com>',
    );
  });
});
