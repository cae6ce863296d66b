/**
 * Digest authentication of inbound INVITEs from outside the allowlist: the challenge, SIPp
 * answering it with the trunk's credentials, and wrong, stale or forged answers refused.
 */
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { NONCE_LIFETIME_MS, SipInboundAuth } from '../../src/calls/sip-inbound-auth.js';
import { buildDigestAuthorization, parseDigestChallenge } from '../../src/transports/sip/digest.js';
import { parseSipMessage } from '../../src/transports/sip/parser.js';
import type { SipRequest } from '../../src/transports/sip/message.js';
import type { Doc } from '../../src/store/resource-store.js';
import { hasSipp, runSipp } from '../support/sipp.js';
import { sippArgs, useSipHarness } from './sip-call-harness.js';
import { inviteOnce, uacTarget } from './sip-inbound-uac.js';

const TRUNK_AUTH = { authUsername: 'trunk-user', authPassword: 'trunk-pass' };

function invite(uri: string, authorization?: string): SipRequest {
  const text = [
    `INVITE ${uri} SIP/2.0`,
    'Via: SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bKabc',
    'From: <sip:a@192.0.2.1>;tag=1',
    `To: <${uri}>`,
    'Call-ID: c1',
    'CSeq: 1 INVITE',
    'Max-Forwards: 70',
    ...(authorization === undefined ? [] : [`Authorization: ${authorization}`]),
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
  const parsed = parseSipMessage(Buffer.from(text));
  if (!parsed.ok || parsed.message.kind !== 'request') {
    throw new Error('bad test INVITE');
  }
  return parsed.message;
}

describe('inbound digest credentials', () => {
  let nowMs = 1_000_000;
  const auth = new SipInboundAuth('parla.test', () => nowMs);
  const trunk: Doc = { provider: 'byo-sip-trunk', outboundAuthenticationPlan: TRUNK_AUTH };
  const uri = 'sip:+14155550100@parla.test';
  const answer = (password: string, answeredUri = uri, username = TRUNK_AUTH.authUsername) =>
    buildDigestAuthorization(parseDigestChallenge(auth.challenge())!, {
      method: 'INVITE',
      uri: answeredUri,
      username,
      password,
    });

  it('accepts the answer made with the trunk username and password', () => {
    const request = invite(uri, answer('trunk-pass'));
    const offered = auth.offered(request)!;
    expect(offered.nonce).toBe('fresh');
    expect(auth.trunkAccepts(trunk, offered, request)).toBe(true);
    // The digest-uri may name the server alone, as SIPp's does.
    const hostOnly = invite(uri, answer('trunk-pass', 'sip:parla.test:5060'));
    expect(auth.trunkAccepts(trunk, auth.offered(hostOnly)!, hostOnly)).toBe(true);
  });

  it('refuses a wrong password, username or URI, and trunks without credentials', () => {
    for (const authorization of [
      answer('wrong'),
      answer('trunk-pass', uri, 'someone'),
      answer('trunk-pass', 'sip:+14155550100@elsewhere.test'),
    ]) {
      const request = invite(uri, authorization);
      expect(auth.trunkAccepts(trunk, auth.offered(request)!, request)).toBe(false);
    }
    const request = invite(uri, answer('trunk-pass'));
    expect(auth.trunkAccepts({ gateways: [] }, auth.offered(request)!, request)).toBe(false);
  });

  it('tells stale and forged nonces apart, and ignores other realms', () => {
    const authorization = answer('trunk-pass');
    nowMs += NONCE_LIFETIME_MS + 1;
    const request = invite(uri, authorization);
    const stale = auth.offered(request)!;
    expect(stale.nonce).toBe('stale');
    expect(auth.trunkAccepts(trunk, stale, request)).toBe(false);
    const forged = authorization.replace(
      /nonce="([^".]+)\.[^"]+"/,
      'nonce="$1.AAAAAAAAAAAAAAAAAAAAAA"',
    );
    expect(forged).not.toBe(authorization);
    expect(auth.offered(invite(uri, forged))?.nonce).toBe('forged');
    const elsewhere = authorization.replace('realm="parla.test"', 'realm="other"');
    expect(auth.offered(invite(uri, elsewhere))).toBeNull();
    expect(auth.offered(invite(uri))).toBeNull();
  });
});

describe('inbound digest nonce counts (replays)', () => {
  const nowMs = 1_000_000;
  const trunk: Doc = { provider: 'byo-sip-trunk', outboundAuthenticationPlan: TRUNK_AUTH };
  const uri = 'sip:+14155550100@parla.test';
  const answerTo = (auth: SipInboundAuth, challenge: string, nonceCount: number) =>
    buildDigestAuthorization(parseDigestChallenge(challenge)!, {
      method: 'INVITE',
      uri,
      username: TRUNK_AUTH.authUsername,
      password: TRUNK_AUTH.authPassword,
      nonceCount,
    });
  const accepts = (auth: SipInboundAuth, authorization: string) => {
    const request = invite(uri, authorization);
    const offered = auth.offered(request)!;
    return { nonce: offered.nonce, accepted: auth.trunkAccepts(trunk, offered, request) };
  };

  it('accepts each nonce count once, and only counting up', () => {
    const auth = new SipInboundAuth('parla.test', () => nowMs);
    const challenge = auth.challenge();
    const first = answerTo(auth, challenge, 1);
    expect(accepts(auth, first)).toEqual({ nonce: 'fresh', accepted: true });
    // The same answer again: a valid digest whose count is used up, so stale=TRUE is right.
    expect(accepts(auth, first)).toEqual({ nonce: 'stale', accepted: false });
    // The next count on the same nonce is a new answer.
    expect(accepts(auth, answerTo(auth, challenge, 2))).toEqual({ nonce: 'fresh', accepted: true });
    // A count that does not go up, on an answer never verified, is a replay.
    expect(accepts(auth, answerTo(auth, challenge, 2))).toEqual({
      nonce: 'replayed',
      accepted: false,
    });
    expect(accepts(auth, answerTo(auth, challenge, 1)).nonce).toBe('replayed');
  });

  it('records only answers it verified', () => {
    const auth = new SipInboundAuth('parla.test', () => nowMs);
    const challenge = auth.challenge();
    const wrong = buildDigestAuthorization(parseDigestChallenge(challenge)!, {
      method: 'INVITE',
      uri,
      username: TRUNK_AUTH.authUsername,
      password: 'wrong',
      nonceCount: 5,
    });
    expect(accepts(auth, wrong)).toEqual({ nonce: 'fresh', accepted: false });
    // A forger's high count burnt nothing: the real peer's count 1 still works.
    expect(accepts(auth, answerTo(auth, challenge, 1))).toEqual({ nonce: 'fresh', accepted: true });
  });

  it('keeps counts in bounded memory: expired ones go, and a nonce pushed out is stale', () => {
    let clockMs = nowMs;
    const auth = new SipInboundAuth('parla.test', () => clockMs, 2);
    const challenges = [auth.challenge()];
    clockMs += 1;
    challenges.push(auth.challenge());
    clockMs += 1;
    challenges.push(auth.challenge());
    for (const challenge of challenges) {
      expect(accepts(auth, answerTo(auth, challenge, 1)).accepted).toBe(true);
    }
    // The third count pushed the first nonce out: it must be answered anew (stale=TRUE).
    expect(accepts(auth, answerTo(auth, challenges[0]!, 2)).nonce).toBe('stale');
    expect(accepts(auth, answerTo(auth, challenges[2]!, 2))).toEqual({
      nonce: 'fresh',
      accepted: true,
    });
    // Past their lifetime the nonces are stale anyway, and their counts are dropped.
    clockMs += NONCE_LIFETIME_MS + 10;
    expect(accepts(auth, answerTo(auth, challenges[2]!, 3)).nonce).toBe('stale');
    expect(accepts(auth, answerTo(auth, auth.challenge(), 1)).accepted).toBe(true);
  });
});

const h = useSipHarness();
let nextNumber = 100;
const newNumber = (): string => `+1555300${String(nextNumber++).padStart(4, '0')}`;
const mediaPort = (): string => String(20_000 + 2 * Math.floor(Math.random() * 4000));

/** A number on a trunk whose only gateway is elsewhere, with digest credentials. */
async function authenticatedNumber(): Promise<{ number: string; phoneNumberId: string }> {
  const number = newNumber();
  const [, trunk] = await h.post('/credential', {
    provider: 'byo-sip-trunk',
    gateways: [{ ip: '192.0.2.10' }],
    outboundAuthenticationPlan: TRUNK_AUTH,
  });
  const [, assistant] = await h.post('/assistant', {
    name: 'Auth',
    metadata: { echoMode: 'echo' },
  });
  const [status, created] = await h.post('/phone-number', {
    provider: 'byo-phone-number',
    number,
    credentialId: trunk.id,
    assistantId: assistant.id,
  });
  expect(status).toBe(201);
  return { number, phoneNumberId: created.id as string };
}

describe.skipIf(!hasSipp)('inbound digest authentication (SIPp trunk)', () => {
  it('answers a trunk that authenticates with its credentials', { timeout: 40_000 }, async () => {
    const { number, phoneNumberId } = await authenticatedNumber();
    const result = await runSipp(
      sippArgs(h, 'inbound-auth.xml', [
        '-s',
        number,
        '-mp',
        mediaPort(),
        '-au',
        TRUNK_AUTH.authUsername,
        '-ap',
        TRUNK_AUTH.authPassword,
      ]),
      tmpdir(),
    );
    expect(result.code, result.output).toBe(0);
    const deadline = Date.now() + 15_000;
    let calls = await h.callsOf(phoneNumberId);
    while (calls[0]?.status !== 'ended' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      calls = await h.callsOf(phoneNumberId);
    }
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ status: 'ended', endedReason: 'customer-ended-call' });
  });

  it('challenges unknown and known numbers alike, then refuses wrong credentials', async () => {
    const { number, phoneNumberId } = await authenticatedNumber();
    for (const dialled of [number, '+15553999999']) {
      const challenged = await inviteOnce({ port: h.sip.port, number: dialled });
      expect(challenged.final?.status).toBe(401);
      const challenge = parseDigestChallenge(challenged.final!.headers.get('www-authenticate')!)!;
      expect(challenge.realm).toBe('127.0.0.1');
      const authorization = buildDigestAuthorization(challenge, {
        method: 'INVITE',
        uri: uacTarget(h.sip.port, dialled),
        username: TRUNK_AUTH.authUsername,
        password: 'not-the-password',
      });
      const refused = await inviteOnce({
        port: h.sip.port,
        number: dialled,
        headers: [['Authorization', authorization]],
      });
      expect(refused.final?.status).toBe(403);
    }
    expect(await h.callsOf(phoneNumberId)).toEqual([]);
  });

  it('challenges a replayed answer again, with stale=TRUE', { timeout: 40_000 }, async () => {
    const { number } = await authenticatedNumber();
    const challenged = await inviteOnce({ port: h.sip.port, number });
    const challenge = parseDigestChallenge(challenged.final!.headers.get('www-authenticate')!)!;
    const authorization = buildDigestAuthorization(challenge, {
      method: 'INVITE',
      uri: uacTarget(h.sip.port, number),
      username: TRUNK_AUTH.authUsername,
      password: TRUNK_AUTH.authPassword,
    });
    const headers = [['Authorization', authorization]] as const;
    const accepted = await inviteOnce({ port: h.sip.port, number, headers });
    expect(accepted.final?.status).toBe(200);
    // The same INVITE again (new Call-ID and branch, same answer): a replay.
    const replayed = await inviteOnce({ port: h.sip.port, number, headers });
    expect(replayed.final?.status).toBe(401);
    const fresh = parseDigestChallenge(replayed.final!.headers.get('www-authenticate')!)!;
    expect(fresh.stale).toBe(true);
    expect(fresh.nonce).not.toBe(challenge.nonce);
  });

  it(
    'challenges SIPp calling an unknown number from outside every allowlist',
    { timeout: 20_000 },
    async () => {
      const result = await runSipp(
        sippArgs(h, 'inbound-401.xml', ['-s', '+15553888888', '-mp', mediaPort()]),
        tmpdir(),
      );
      expect(result.code, result.output).toBe(0);
    },
  );
});
