import { describe, expect, it } from 'vitest';
import { hasSipp } from '../support/sipp.js';
import { freeUdpPort, startSippUas, useSipHarness } from './sip-call-harness.js';

async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe.skipIf(!hasSipp)('trunk registrations of the SIP server', () => {
  const h = useSipHarness();

  it(
    'registers trunks whose credential has a sipRegisterPlan, and unregisters deleted ones',
    { timeout: 40_000 },
    async () => {
      const port = await freeUdpPort();
      const sipp = startSippUas('outbound-register-once.xml', port);
      const gateways = [{ ip: '127.0.0.1', port, inboundEnabled: false }];
      const [, plain] = await h.post('/credential', { provider: 'byo-sip-trunk', gateways });
      const [status, trunk] = await h.post('/credential', {
        provider: 'byo-sip-trunk',
        gateways,
        outboundAuthenticationPlan: {
          authUsername: 'parla-user',
          authPassword: 'unused-without-challenge',
          sipRegisterPlan: { domain: 'trunk.test' },
        },
      });
      expect(status).toBe(201);
      await h.sip.registrations.reload();
      const registrations = h.sip.registrations;
      expect(registrations.state(h.orgId, plain.id as string)).toBeUndefined();
      await waitFor(
        () => registrations.state(h.orgId, trunk.id as string) === 'registered',
        15_000,
        `the registration (${String(registrations.state(h.orgId, trunk.id as string))})`,
      );
      const deleted = await h.app.inject({
        method: 'DELETE',
        url: `/credential/${trunk.id as string}`,
        headers: { authorization: `Bearer ${h.key}` },
      });
      expect(deleted.statusCode).toBe(200);
      await registrations.reload();
      expect(registrations.state(h.orgId, trunk.id as string)).toBeUndefined();
      const result = await sipp.exited;
      expect(result.code, result.output).toBe(0);
    },
  );

  it("registers through the trunk's outbound proxy", { timeout: 40_000 }, async () => {
    const port = await freeUdpPort();
    const sipp = startSippUas('outbound-register-proxy.xml', port);
    const [status, trunk] = await h.post('/credential', {
      provider: 'byo-sip-trunk',
      // The registrar's name is only ever resolved by the proxy.
      gateways: [{ ip: 'registrar.example.com', inboundEnabled: false }],
      outboundProxy: `sip:127.0.0.1:${port}`,
      outboundAuthenticationPlan: {
        authUsername: 'parla-user',
        authPassword: 'unused-without-challenge',
        sipRegisterPlan: { domain: 'trunk.test' },
      },
    });
    expect(status).toBe(201);
    const registrations = h.sip.registrations;
    await registrations.reload();
    await waitFor(
      () => registrations.state(h.orgId, trunk.id as string) === 'registered',
      15_000,
      `the registration (${String(registrations.state(h.orgId, trunk.id as string))})`,
    );
    await h.app.inject({
      method: 'DELETE',
      url: `/credential/${trunk.id as string}`,
      headers: { authorization: `Bearer ${h.key}` },
    });
    await registrations.reload();
    const result = await sipp.exited;
    expect(result.code, result.output).toBe(0);
  });
});
