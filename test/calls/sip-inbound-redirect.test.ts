import { describe, expect, it } from 'vitest';
import { filtersMatch, ringingTransfer } from '../../src/calls/sip-inbound-hooks.js';
import {
  headerText,
  outboundGateway,
  redirectTarget,
} from '../../src/calls/sip-inbound-redirect.js';
import { parseUri } from '../../src/transports/sip/uri.js';

const trunk = {
  provider: 'byo-sip-trunk',
  gateways: [
    { ip: '198.51.100.1', outboundEnabled: false },
    { ip: '203.0.113.7', port: 5080 },
  ],
};

describe('302 targets', () => {
  it('dial a number through the first outbound gateway of the trunk', () => {
    expect(redirectTarget({ type: 'number', number: '+14155550100' }, trunk, '192.0.2.1')).toBe(
      'sip:+14155550100@203.0.113.7:5080;user=phone',
    );
    expect(outboundGateway({ gateways: [{ ip: '2001:db8::1' }] })).toBe('[2001:db8::1]');
  });

  it('dial through the INVITE source when the trunk has no outbound gateway', () => {
    expect(redirectTarget({ type: 'number', number: 'alice7' }, null, '192.0.2.1')).toBe(
      'sip:alice7@192.0.2.1',
    );
    expect(redirectTarget({ type: 'number', number: '+4930123' }, { gateways: [] }, '::1')).toBe(
      'sip:+4930123@[::1];user=phone',
    );
  });

  it('carry the extension as ext= (digits) or postd= (pauses, # escaped)', () => {
    const withExt = (extension: string) =>
      redirectTarget({ type: 'number', number: '+14155550100', extension }, trunk, 'x');
    expect(withExt('123')).toBe('sip:+14155550100;ext=123@203.0.113.7:5080;user=phone');
    expect(withExt('1W2#')).toBe('sip:+14155550100;postd=1w2%23@203.0.113.7:5080;user=phone');
    // Each target is a SIP URI our own parser accepts.
    expect(parseUri(withExt('1W2#')!)).not.toBeNull();
  });

  it('use a SIP destination as given, with its sipHeaders as URI headers', () => {
    expect(redirectTarget({ type: 'sip', sipUri: 'sip:desk@pbx.example.com' }, trunk, 'x')).toBe(
      'sip:desk@pbx.example.com',
    );
    const target = redirectTarget(
      {
        type: 'sip',
        sipUri: 'sips:desk@pbx.example.com',
        sipHeaders: { 'X-Reason': 'after hours' },
      },
      trunk,
      'x',
    );
    expect(target).toBe('sips:desk@pbx.example.com?X-Reason=after%20hours');
    expect(parseUri(target!)).not.toBeNull();
  });

  it('refuse what cannot be a target', () => {
    expect(redirectTarget({ type: 'sip', sipUri: 'sip:' }, trunk, 'x')).toBeUndefined();
    expect(redirectTarget({ type: 'number', number: '1 2' }, trunk, 'x')).toBeUndefined();
    expect(redirectTarget({ type: 'assistant' }, trunk, 'x')).toBeUndefined();
  });

  it('keep header texts safe for a quoted-string', () => {
    expect(headerText('say "hi"\r\nInjected: yes\\')).toBe('say hi Injected: yes');
    expect(headerText('x'.repeat(500))).toHaveLength(120);
  });
});

describe('call.ringing hooks', () => {
  const call = { type: 'inboundPhoneCall', customer: { number: '+15550001111' } };
  const transfer = (sipUri: string) => ({ type: 'transfer', destination: { type: 'sip', sipUri } });

  it('return the first transfer of the first hook whose filters match', () => {
    const number = {
      hooks: [
        { on: 'call.ending', do: [transfer('sip:wrong-event@x')] },
        {
          on: 'call.ringing',
          filters: [{ type: 'oneOf', key: 'customer.number', oneOf: ['+15550009999'] }],
          do: [transfer('sip:vip@x')],
        },
        { on: 'call.ringing', do: [{ type: 'say', exact: 'hi' }, transfer('sip:all@x')] },
      ],
    };
    expect(ringingTransfer(number, call)).toEqual({ type: 'sip', sipUri: 'sip:all@x' });
    expect(ringingTransfer(number, { ...call, customer: { number: '+15550009999' } })).toEqual({
      type: 'sip',
      sipUri: 'sip:vip@x',
    });
    expect(ringingTransfer({}, call)).toBeUndefined();
    expect(ringingTransfer({ hooks: 'nonsense' }, call)).toBeUndefined();
  });

  it('match filters on paths into the call and the number; unknown paths do not match', () => {
    const context = { ...call, call, customer: call.customer, phoneNumber: { name: 'Sales' } };
    const oneOf = (key: string, values: string[]) => [{ type: 'oneOf', key, oneOf: values }];
    expect(filtersMatch(oneOf('call.customer.number', ['+15550001111']), context)).toBe(true);
    expect(filtersMatch(oneOf('phoneNumber.name', ['Sales', 'Support']), context)).toBe(true);
    expect(filtersMatch(oneOf('phoneNumber.name', ['Support']), context)).toBe(false);
    expect(filtersMatch(oneOf('customer.nothing', ['']), context)).toBe(false);
    expect(filtersMatch(oneOf('__proto__.x', ['']), context)).toBe(false);
    expect(filtersMatch('nonsense', context)).toBe(false);
    expect(filtersMatch(undefined, context)).toBe(true);
  });
});
