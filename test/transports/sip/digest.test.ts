import { describe, expect, it } from 'vitest';

import {
  answerDigestChallenge,
  buildDigestAuthorization,
  buildDigestChallenge,
  parseDigestChallenge,
  parseDigestCredentials,
  pickDigestChallenge,
  verifyDigestCredentials,
} from '../../../src/transports/sip/digest.js';

describe('digest (RFC 2617 §3.5 example)', () => {
  const challengeText =
    'Digest realm="testrealm@host.com", qop="auth,auth-int", ' +
    'nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41"';

  it('parses the challenge', () => {
    expect(parseDigestChallenge(challengeText)).toEqual({
      realm: 'testrealm@host.com',
      nonce: 'dcd98b7102dd2f0e8b11d0f600bfb0c093',
      opaque: '5ccc069c403ebaf9f0171e9517f40e41',
      algorithm: 'MD5',
      qopAuth: true,
      stale: false,
    });
  });

  it('computes the published response and verifies it', () => {
    const challenge = parseDigestChallenge(challengeText)!;
    const value = buildDigestAuthorization(challenge, {
      method: 'GET',
      uri: '/dir/index.html',
      username: 'Mufasa',
      password: 'Circle Of Life',
      nonceCount: 1,
      cnonce: '0a4f113b',
    });
    expect(value).toContain('response="6629fae49393a05397450978507c4ef1"');
    expect(value).toContain('nc=00000001');
    const parsed = parseDigestCredentials(value)!;
    expect(parsed.username).toBe('Mufasa');
    expect(parsed.opaque).toBe('5ccc069c403ebaf9f0171e9517f40e41');
    expect(verifyDigestCredentials(parsed, 'GET', 'Circle Of Life')).toBe(true);
    expect(verifyDigestCredentials(parsed, 'GET', 'circle of life')).toBe(false);
    expect(verifyDigestCredentials(parsed, 'POST', 'Circle Of Life')).toBe(false);
  });
});

describe('digest (RFC 7616 §3.9.1 example)', () => {
  const base = {
    method: 'GET',
    uri: '/dir/index.html',
    username: 'Mufasa',
    password: 'Circle of Life',
    nonceCount: 1,
    cnonce: 'f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ',
  };
  const challenge = (algorithm: string): string =>
    `Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=${algorithm}, ` +
    'nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", ' +
    'opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"';

  it('computes the MD5 response', () => {
    const answer = answerDigestChallenge(parseDigestChallenge(challenge('MD5'))!, base);
    expect(answer.response).toBe('8ca523f5e9506fed4657c9700eebdbec');
  });

  it('computes the SHA-256 response', () => {
    const answer = answerDigestChallenge(parseDigestChallenge(challenge('SHA-256'))!, base);
    expect(answer.response).toBe(
      '753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1',
    );
  });

  it('prefers SHA-256 when both are offered', () => {
    expect(pickDigestChallenge([challenge('MD5'), challenge('SHA-256')])?.algorithm).toBe(
      'SHA-256',
    );
  });
});

describe('digest round trips and bad input', () => {
  it('verifies its own challenge answers for every algorithm, with and without qop', () => {
    for (const algorithm of ['MD5', 'MD5-sess', 'SHA-256', 'SHA-256-sess'] as const) {
      const challenge = parseDigestChallenge(
        buildDigestChallenge({ realm: 'parla', algorithm, opaque: 'o' }),
      )!;
      expect(challenge.algorithm).toBe(algorithm);
      const value = buildDigestAuthorization(challenge, {
        method: 'INVITE',
        uri: 'sip:+15551234567@trunk.example.com',
        username: 'alice',
        password: 's3cret',
      });
      const parsed = parseDigestCredentials(value)!;
      expect(verifyDigestCredentials(parsed, 'INVITE', 's3cret')).toBe(true);
      expect(verifyDigestCredentials(parsed, 'INVITE', 'wrong')).toBe(false);
    }
    const noQop = parseDigestChallenge('Digest realm="r", nonce="n"')!;
    expect(noQop.qopAuth).toBe(false);
    const value = buildDigestAuthorization(noQop, {
      method: 'REGISTER',
      uri: 'sip:r',
      username: 'u',
      password: 'p',
    });
    expect(value).not.toContain('qop=');
    expect(verifyDigestCredentials(parseDigestCredentials(value)!, 'REGISTER', 'p')).toBe(true);
  });

  it('reads stale, case-insensitive names and escaped quotes', () => {
    const parsed = parseDigestChallenge(
      'digest REALM="a \\"quoted\\" realm",NONCE="x,y", stale=TRUE, algorithm=md5',
    );
    expect(parsed).toMatchObject({ realm: 'a "quoted" realm', nonce: 'x,y', stale: true });
  });

  it.each([
    'Basic realm="x"',
    'Digest',
    'Digest realm="x"',
    'Digest nonce="n"',
    'Digest realm="x", nonce="n", algorithm=SHA-512-256',
    'Digest realm="x", nonce="n", qop="auth-int"',
    'Digest realm="x, nonce="n"',
    'Digest realm="x", realm="y", nonce="n"',
    'Digest realm=, nonce="n"',
  ])('rejects challenge %s', (value) => {
    expect(parseDigestChallenge(value)).toBeNull();
  });

  it.each([
    'Digest username="u", realm="r", nonce="n", uri="sip:x"',
    'Digest username="u", realm="r", nonce="n", uri="sip:x", response="ab", qop=auth',
    'Digest username="u", realm="r", nonce="n", uri="sip:x", response="ab", qop=auth, nc=1, cnonce="c"',
    'Bearer abc',
  ])('rejects credentials %s', (value) => {
    expect(parseDigestCredentials(value)).toBeNull();
  });
});
