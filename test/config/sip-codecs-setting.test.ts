import { describe, expect, it } from 'vitest';
import { SipCodecs } from '../../src/calls/sip-codecs.js';
import { loadConfig } from '../../src/config/load.js';

describe('PARLA_SIP_CODECS', () => {
  it('defaults to G.711 first, then G.722 and Opus', () => {
    expect(loadConfig({}).sipCodecs).toBe('PCMU,PCMA,G722,opus');
  });

  it('takes a comma list in any case and stores it spelt as SDP spells it', () => {
    const config = loadConfig({ PARLA_SIP_CODECS: ' OPUS , g722,pcmu' });
    expect(config.sipCodecs).toBe('opus,G722,PCMU');
    expect(SipCodecs.parse(config.sipCodecs).codecs.map((codec) => codec.encoding)).toEqual([
      'opus',
      'G722',
      'PCMU',
    ]);
  });

  it('fails naming the setting, its variable and the bad entry', () => {
    expect(() => loadConfig({ PARLA_SIP_CODECS: 'PCMU,GSM' })).toThrow(
      /sipCodecs \(PARLA_SIP_CODECS\): "GSM" is not one of PCMU, PCMA, G722, opus/,
    );
    expect(() => loadConfig({ PARLA_SIP_CODECS: 'PCMA,pcma' })).toThrow(/PCMA is listed twice/);
    expect(() => loadConfig({ PARLA_SIP_CODECS: '' })).toThrow(/PARLA_SIP_CODECS/);
  });
});
