import { describe, expect, it } from 'vitest';
import { gatewayAllows, numberCandidates } from '../../src/calls/sip-inbound-route.js';

describe('the trunk allowlist', () => {
  const trunk = {
    provider: 'byo-sip-trunk',
    gateways: [
      { ip: '203.0.113.7' },
      { ip: '198.51.100.0', netmask: 24 },
      { ip: '192.0.2.1', inboundEnabled: false },
      { ip: '2001:db8::1' },
      { ip: 'sip.example.com' },
    ],
  };

  it('admits a gateway address, within its netmask', () => {
    expect(gatewayAllows(trunk, '203.0.113.7')).toBe(true);
    expect(gatewayAllows(trunk, '::ffff:203.0.113.7')).toBe(true);
    expect(gatewayAllows(trunk, '198.51.100.200')).toBe(true);
    expect(gatewayAllows(trunk, '2001:DB8::1')).toBe(true);
  });

  it('refuses other addresses, outbound-only gateways and hostnames', () => {
    expect(gatewayAllows(trunk, '203.0.113.8')).toBe(false);
    expect(gatewayAllows(trunk, '198.51.101.1')).toBe(false);
    expect(gatewayAllows(trunk, '192.0.2.1')).toBe(false);
    expect(gatewayAllows(trunk, '2001:db8::2')).toBe(false);
    expect(gatewayAllows(trunk, 'sip.example.com')).toBe(false);
    expect(gatewayAllows({ gateways: 'nonsense' }, '203.0.113.7')).toBe(false);
  });
});

describe('dialled numbers', () => {
  it('match the stored number with or without its plus', () => {
    expect(numberCandidates('+14155551234')).toEqual(['+14155551234', '14155551234']);
    expect(numberCandidates('14155551234;npdi')).toEqual(['14155551234', '+14155551234']);
    expect(numberCandidates('+1-415-555-1234')).toEqual(['+14155551234', '14155551234']);
  });

  it('ignore user parts that cannot be numbers', () => {
    expect(numberCandidates('')).toEqual([]);
    expect(numberCandidates("x'; drop table")).toEqual([]);
    expect(numberCandidates('1'.repeat(41))).toEqual([]);
  });
});
