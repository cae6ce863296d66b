import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  getCSeq,
  getCallId,
  getFrom,
  getTo,
  getTopVia,
  type SipRequest,
  type SipResponse,
} from '../../../src/transports/sip/message.js';
import { parseNameAddr } from '../../../src/transports/sip/name-addr.js';
import { parseSipMessage, type SipParseResult } from '../../../src/transports/sip/parser.js';
import { serializeSipMessage } from '../../../src/transports/sip/serializer.js';
import { decodeUriPart, isSipUri, parseUri, type SipUri } from '../../../src/transports/sip/uri.js';
import { parseVia } from '../../../src/transports/sip/via.js';

const FIXTURES = new URL('../../fixtures/sip/', import.meta.url);
const corpus = JSON.parse(readFileSync(new URL('corpus.json', FIXTURES), 'utf8')) as {
  file: string;
  expect: string;
  reply?: number | null;
}[];

function fixture(name: string): Buffer {
  return readFileSync(new URL(name, FIXTURES));
}

function parseOk(name: string, stream = false) {
  const result = parseSipMessage(fixture(name), { stream });
  if (!result.ok) {
    throw new Error(`${name}: ${result.code} ${result.reason}`);
  }
  return result.message;
}

describe('parseSipMessage on the torture corpus (in the spirit of RFC 4475)', () => {
  for (const entry of corpus) {
    it(`${entry.file} → ${entry.expect}`, () => {
      const result: SipParseResult = parseSipMessage(fixture(entry.file));
      if (entry.expect === 'ok') {
        expect(result.ok ? 'ok' : `${result.code}: ${result.reason}`).toBe('ok');
        return;
      }
      expect(result.ok).toBe(false);
      if (result.ok) {
        return;
      }
      expect(result.code).toBe(entry.expect);
      expect(result.reply?.status ?? null).toBe(entry.reply);
      if (result.reply !== undefined) {
        expect(parseVia(result.reply.headers.getAll('Via')[0]!)).not.toBeNull();
      }
    });
  }

  it('reads the whitespace-heavy INVITE: folding, compact forms, odd spacing', () => {
    const message = parseOk('valid/whitespace-invite.sip') as SipRequest;
    expect(message.method).toBe('INVITE');
    expect(getTo(message)!.params.get('tag')).toBe('1918181833n');
    expect(getFrom(message)!.displayName).toBe('Alice \\"Q\\"');
    expect(getFrom(message)!.params.get('tag')).toBe('98asjd8');
    expect(message.headers.get('Max-Forwards')).toBe('0068');
    expect(getCSeq(message)).toEqual({ seq: 9, method: 'INVITE' });
    const vias = message.headers.getAll('v').map((value) => parseVia(value)!);
    expect(vias.map((via) => [via.transport, via.host, via.params.get('branch')])).toEqual([
      ['UDP', '192.0.2.2', 'z9hG4bKws390skdjuw'],
      ['TCP', 'spindle.example.com', 'z9hG4bK9ikj8'],
      ['UDP', '192.168.255.111', 'z9hG4bK30239'],
    ]);
    expect(message.headers.get('NEWFANGLEDHEADER')).toBe(
      'newfangled value continued newfangled value',
    );
    expect(message.headers.get('Subject')).toBe('');
    const contact = message.headers.getAll('Contact');
    expect(contact).toHaveLength(1);
    expect(message.headers.getAll('Route')).toEqual([
      '<sip:services.example.com;lr;unknownwith=value;unknown-no-value>',
    ]);
    expect(message.body.toString()).toMatch(/^v=0\r\n/);
    expect(message.body.length).toBe(Number(message.headers.get('content-length')));
  });

  it('keeps user parts with ; ? / and escapes, and IPv6 references', () => {
    const semi = parseOk('valid/semicolon-user.sip') as SipRequest;
    const uri = parseUri(semi.uri) as SipUri;
    expect([uri.user, uri.host]).toEqual(['user;par=u%40example.net', 'example.com']);
    expect(semi.headers.getAll('Accept')).toHaveLength(6);
    const odd = parseOk('valid/unusual-method.sip') as SipRequest;
    expect(odd.method).toBe("!interesting-Method0123456789_*+`.%indeed'~");
    expect((parseUri(odd.uri) as SipUri).password).toBe(
      "&it+has=1,weird!*pas$wo~d_too.(doesn't-it)",
    );
    const v6 = parseOk('valid/ipv6.sip') as SipRequest;
    expect(parseUri(v6.uri)).toMatchObject({ host: '[2001:db8::10]', port: 5070 });
    const via = getTopVia(v6)!;
    expect([via.host, via.port, via.params.get('received'), via.params.get('rport')]).toEqual([
      '[2001:db8::9:1]',
      5060,
      '[2001:db8::9:255]',
      null,
    ]);
  });

  it('reads a carrier INVITE: Record-Route, two Vias, PAI list, quoted Contact params', () => {
    const invite = parseOk('valid/carrier-invite.sip') as SipRequest;
    expect(invite.headers.getAll('P-Asserted-Identity')).toEqual([
      '"WIRELESS CALLER" <sip:+12125550100@198.51.100.77>',
      '<tel:+12125550100>',
    ]);
    const contact = parseNameAddr(invite.headers.get('m')!)!;
    expect(contact.params.get('+sip.instance')).toBe(
      '"<urn:uuid:00000000-0000-1000-8000-0002a5d5c51b>"',
    );
    expect(
      invite.headers.getAll('Via').map((value) => parseVia(value)!.params.get('rport')),
    ).toEqual([undefined, '5060']);
    expect(getFrom(invite)!.displayName).toBe('WIRELESS CALLER');
  });

  it('drops the extra bytes of a datagram after the declared body, and reads responses', () => {
    const register = parseOk('valid/trailing-datagram-bytes.sip');
    expect(register.body.length).toBe(0);
    const unusual = parseOk('valid/unusual-reason.sip') as SipResponse;
    expect(unusual.status).toBe(200);
    expect(unusual.reason).toBe('= 2**3 * 5**2 но сто девяносто девять - простое');
    const empty = parseOk('valid/empty-reason.sip') as SipResponse;
    expect([empty.status, empty.reason]).toEqual([100, '']);
  });

  it('takes the rest of a datagram as the body without Content-Length, requires it on streams', () => {
    const text =
      'MESSAGE sip:a@example.com SIP/2.0\r\nVia: SIP/2.0/UDP h.example.com;branch=z9hG4bK1\r\n' +
      'To: <sip:a@example.com>\r\nFrom: <sip:b@example.com>;tag=1\r\nCall-ID: c1\r\n' +
      'CSeq: 1 MESSAGE\r\n\r\nhello';
    const datagram = parseSipMessage(Buffer.from(text));
    expect(datagram.ok && datagram.message.body.toString()).toBe('hello');
    const stream = parseSipMessage(Buffer.from(text), { stream: true });
    expect(stream.ok ? 'ok' : [stream.code, stream.reply?.status]).toEqual([
      'SIP_BAD_CONTENT_LENGTH',
      400,
    ]);
  });

  it('enforces the size limits with stable codes', () => {
    const options = parseOk('valid/options-no-body-udp.sip');
    const bytes = serializeSipMessage(options);
    const limits = { maxMessageBytes: 65_535, maxHeaderCount: 256, maxLineChars: 8_192 };
    const small = parseSipMessage(bytes, { limits: { ...limits, maxMessageBytes: 100 } });
    expect(!small.ok && [small.code, small.reply?.status]).toEqual([
      'SIP_MESSAGE_TOO_LARGE',
      undefined,
    ]);
    const withBody = serializeSipMessage({ ...options, body: Buffer.alloc(200, 'x') });
    const big = parseSipMessage(withBody, {
      limits: { ...limits, maxMessageBytes: withBody.length - 100 },
    });
    expect(!big.ok && [big.code, big.reply?.status]).toEqual(['SIP_MESSAGE_TOO_LARGE', 513]);
    const few = parseSipMessage(bytes, { limits: { ...limits, maxHeaderCount: 3 } });
    expect(!few.ok && [few.code, few.reply?.status]).toEqual(['SIP_TOO_MANY_HEADERS', 400]);
    const shortLines = parseSipMessage(bytes, { limits: { ...limits, maxLineChars: 40 } });
    expect(!shortLines.ok && shortLines.code).toBe('SIP_LINE_TOO_LONG');
    const onlyBreaks = parseSipMessage(Buffer.from('\r\n\r\n'));
    expect(!onlyBreaks.ok && onlyBreaks.code).toBe('SIP_EMPTY');
  });

  it('round-trips every valid message through the serializer', () => {
    for (const entry of corpus.filter((item) => item.expect === 'ok')) {
      const first = parseOk(entry.file);
      const again = parseSipMessage(serializeSipMessage(first));
      expect(again.ok, entry.file).toBe(true);
      if (!again.ok) {
        continue;
      }
      expect(again.message.headers.entries().filter((f) => f.name !== 'Content-Length')).toEqual(
        first.headers.entries().filter((f) => f.name !== 'Content-Length'),
      );
      expect(again.message.body.equals(first.body)).toBe(true);
      expect(getCallId(again.message)).toBe(getCallId(first));
    }
  });

  it('keeps escapes as written and resolves them on request', () => {
    const message = parseOk('valid/escaped-uris.sip') as SipRequest;
    const to = getTo(message)!.uri as SipUri;
    expect([to.user, decodeUriPart(to.user!)]).toEqual(['%75se%72', 'user']);
    expect(decodeUriPart((parseUri(message.uri) as SipUri).user!)).toBe('sips:user@example.com');
    expect(decodeUriPart('bad%zzescape%41')).toBe('bad%zzescapeA');
  });

  it('parses URIs: schemes, params, headers, and rejects broken ones', () => {
    const tel = parseUri('tel:+14085551234;phone-context=example.com');
    expect(tel && !isSipUri(tel) && tel.opaque).toBe('+14085551234;phone-context=example.com');
    const sips = parseUri('SIPS:alice:secret@Example.COM:5061;transport=TCP;lr?subject=hi')!;
    expect(sips).toMatchObject({
      scheme: 'sips',
      user: 'alice',
      password: 'secret',
      host: 'Example.COM',
      port: 5061,
      headers: 'subject=hi',
    });
    expect([...(sips as SipUri).params]).toEqual([
      ['transport', 'TCP'],
      ['lr', null],
    ]);
    for (const bad of [
      'sip:',
      'sip:a b@example.com',
      'sip:example.com:99999',
      'sip:x@[::1',
      ':x',
    ]) {
      expect(parseUri(bad), bad).toBeNull();
    }
  });
});
