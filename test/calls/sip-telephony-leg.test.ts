import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { readReferNotify, referRefusal, referTarget } from '../../src/calls/sip-refer.js';
import { SipTelephonyLeg } from '../../src/calls/sip-telephony-leg.js';
import type { Doc } from '../../src/store/resource-store.js';
import { RtpPortAllocator } from '../../src/transports/rtp/rtp-port-allocator.js';
import { RtpSession } from '../../src/transports/rtp/rtp-session.js';
import { SipDialogLayer, type DialogEndReason } from '../../src/transports/sip/dialog-layer.js';
import type { SipDialog } from '../../src/transports/sip/dialog.js';
import { SipHeaders } from '../../src/transports/sip/headers.js';
import { parseNameAddr } from '../../src/transports/sip/name-addr.js';
import type { SipRequest } from '../../src/transports/sip/message.js';
import type { ServerTransaction } from '../../src/transports/sip/server-transactions.js';
import { SipUserAgent } from '../../src/transports/sip/sip-user-agent.js';
import { SipUdpTransport } from '../../src/transports/sip/transport-udp.js';
import type { DtmfDigitEvent } from '../../src/transports/rtp/telephone-event.js';
import { hasSipp, runSipp } from '../support/sipp.js';

const SCENARIOS = fileURLToPath(new URL('../fixtures/sip/sipp/', import.meta.url));

const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    await cleanup();
  }
});

type ReferBehaviour = (
  far: FarEnd,
  dialog: SipDialog,
  request: SipRequest,
  transaction: ServerTransaction,
) => void;

/** The trunk side: a dialog layer on a UDP socket that answers in-dialog requests as told. */
interface FarEnd {
  layer: SipDialogLayer;
  port: number;
  requests: SipRequest[];
  ended: DialogEndReason[];
  onRequest: ReferBehaviour;
  notify(dialog: SipDialog, sipfrag: string, state: string): void;
}

async function startFarEnd(): Promise<FarEnd> {
  // The transport delivers into the layer, which needs the transport first.
  const slot: { layer?: SipDialogLayer } = {};
  const transport = await SipUdpTransport.listen({
    host: '127.0.0.1',
    port: 0,
    onMessage: (message, source) => slot.layer?.receive(message, source),
  });
  const far: FarEnd = {
    layer: undefined as unknown as SipDialogLayer,
    port: transport.port,
    requests: [],
    ended: [],
    onRequest: (f, dialog, request, transaction) =>
      f.layer.respond(dialog, request, transaction, 200),
    notify: (dialog, sipfrag, state) =>
      void far.layer.request(dialog, 'NOTIFY', {
        headers: [
          ['Event', 'refer'],
          ['Subscription-State', state],
        ],
        body: Buffer.from(`${sipfrag}\r\n`),
        contentType: 'message/sipfrag;version=2.0',
      }),
  };
  const layer = new SipDialogLayer({
    transports: [transport],
    onInvite: (invite) => layer.accept(invite, {}),
    onDialogRequest: (dialog, request, transaction) => {
      far.requests.push(request);
      far.onRequest(far, dialog, request, transaction);
    },
    onDialogEnded: (_dialog, reason) => far.ended.push(reason),
  });
  far.layer = layer;
  slot.layer = layer;
  cleanups.push(async () => {
    layer.close();
    await transport.close();
  });
  return far;
}

async function callFarEnd(far: { port: number }) {
  const ended: DialogEndReason[] = [];
  const agent = await SipUserAgent.start({
    host: '127.0.0.1',
    port: 0,
    tcp: false,
    handler: {
      onInvite: () => {},
      onCancel: () => {},
      onDialogEnded: (_dialog, reason) => ended.push(reason),
    },
  });
  cleanups.push(() => agent.close());
  const call = agent.dialogs.invite({
    target: { transport: 'UDP', address: '127.0.0.1', port: far.port },
    requestUri: `sip:+15550123@127.0.0.1:${far.port}`,
    from: '"Parla" <sip:+15550100@127.0.0.1>',
    to: `<sip:+15550123@127.0.0.1:${far.port}>`,
  });
  const result = await call.result;
  if (!result.ok) {
    throw new Error(`the call was not answered: ${result.status}`);
  }
  return { agent, dialog: result.dialog, ended };
}

const noRtp = { canSendDtmf: false, sendDtmfSteps: () => Promise.resolve(false) };

/** A leg whose bridge (the transfer Parla carries itself) only records what it was asked. */
function legWithBridge(agent: SipUserAgent, dialog: SipDialog) {
  const bridged: Doc[] = [];
  const leg = new SipTelephonyLeg({
    agent,
    dialog,
    rtp: noRtp,
    bridge: (destination) => {
      bridged.push(destination);
      return Promise.resolve({ ok: true });
    },
  });
  return { leg, bridged };
}

describe('Refer-To from a transfer destination', () => {
  it('builds number and SIP targets, with sipHeaders in the URI or on the REFER', () => {
    expect(referTarget({ type: 'number', number: '+15551234567' }, 'trunk.example:5070')).toEqual({
      ok: true,
      referTo: '<sip:+15551234567@trunk.example:5070>',
      headers: [],
    });
    expect(referTarget({ type: 'number', number: '+1555', extension: '22' }, 'h')).toMatchObject({
      referTo: '<sip:+1555;ext=22@h>',
    });
    // Pauses and * or # cannot be an RFC 3966 ext: RFC 4715 postd, pauses one second each.
    expect(referTarget({ type: 'number', number: '+1555', extension: '1w2#' }, 'h')).toMatchObject({
      referTo: '<sip:+1555;postd=1p2%23@h>',
    });
    const sip = {
      type: 'sip',
      sipUri: 'sip:desk@pbx.example',
      sipHeaders: { 'X-Case': 'a b&c', 'User-to-User': '01ff' },
    };
    expect(referTarget(sip, undefined)).toEqual({
      ok: true,
      referTo: '<sip:desk@pbx.example>',
      headers: [
        ['X-Case', 'a b&c'],
        ['User-to-User', '01ff'],
      ],
    });
    const inUri = referTarget({ ...sip, transferPlan: { sipHeadersInReferToEnabled: true } }, 'h');
    expect(inUri).toEqual({
      ok: true,
      referTo: '<sip:desk@pbx.example?X-Case=a%20b%26c&User-to-User=01ff>',
      headers: [],
    });
  });

  it('refuses malformed destinations with a stable code', () => {
    for (const destination of [
      { type: 'number', number: '12 34' },
      { type: 'number', number: '+1555', extension: 'x' },
      { type: 'number', number: '+1555', extension: 'wW' },
      { type: 'number', number: '+1555', extension: '12345678901' },
      { type: 'sip', sipUri: 'mailto:a@b' },
      { type: 'sip', sipUri: 'sip:a@b', sipHeaders: { Via: 'x' } },
      { type: 'sip', sipUri: 'sip:a@b', sipHeaders: { 'X-A': 'line\r\nBreak: 1' } },
    ]) {
      expect(referTarget(destination, 'h')).toMatchObject({
        ok: false,
        code: 'invalid-destination',
      });
    }
    expect(referTarget({ type: 'assistant' }, 'h')).toMatchObject({
      ok: false,
      code: 'transfer-not-supported',
    });
  });

  it('tells a REFER the peer will not carry from a dialog that is gone', () => {
    for (const status of [400, 403, 405, 420, 480, 486, 488, 489, 500, 501, 503, 603]) {
      expect([status, referRefusal(status)]).toEqual([status, 'bridge']);
    }
    for (const status of [404, 408, 410, 416, 481, 482, 483, 484, 485, 502, 604]) {
      expect([status, referRefusal(status)]).toEqual([status, 'dialog-gone']);
    }
    expect(referRefusal(491)).toBe('retry');
  });

  it('reads the status of a refer NOTIFY', () => {
    const notify = (event: string, body: string, state = 'active'): SipRequest => ({
      kind: 'request',
      method: 'NOTIFY',
      uri: 'sip:x@y',
      headers: new SipHeaders([
        ['Event', event],
        ['Subscription-State', state],
        ['Content-Type', 'message/sipfrag;version=2.0'],
      ]),
      body: Buffer.from(body),
    });
    expect(readReferNotify(notify('refer', 'SIP/2.0 180 Ringing\r\n'))).toEqual({
      status: 180,
      terminated: false,
    });
    expect(readReferNotify(notify('refer;id=7', 'SIP/2.0 200 OK', 'terminated'))).toEqual({
      status: 200,
      terminated: true,
    });
    expect(readReferNotify(notify('dialog', 'SIP/2.0 200 OK'))).toBeUndefined();
    expect(readReferNotify(notify('refer', 'garbage'))).toEqual({
      status: undefined,
      terminated: false,
    });
  });
});

describe('SipTelephonyLeg between two user agents on 127.0.0.1', () => {
  it('REFER accepted, NOTIFY 100 then 200: the transfer succeeds and we send BYE', async () => {
    const far = await startFarEnd();
    far.onRequest = (f, dialog, request, transaction) => {
      if (request.method !== 'REFER') {
        f.layer.respond(dialog, request, transaction, 200);
        return;
      }
      f.layer.respond(dialog, request, transaction, 202);
      f.notify(dialog, 'SIP/2.0 100 Trying', 'active;expires=60');
      setTimeout(() => f.notify(dialog, 'SIP/2.0 200 OK', 'terminated;reason=noresource'), 50);
    };
    const { agent, dialog } = await callFarEnd(far);
    const leg = new SipTelephonyLeg({ agent, dialog, rtp: noRtp });
    const outcome = await leg.transfer({
      type: 'sip',
      sipUri: 'sip:desk@pbx.example',
      sipHeaders: { 'X-Reason': 'sales' },
    });
    expect(outcome).toEqual({ ok: true });
    expect(leg.transferAccepted).toBe(true);
    await expect.poll(() => far.ended, { timeout: 10_000 }).toEqual(['remote-bye']);
    const refer = far.requests.find((r) => r.method === 'REFER')!;
    expect(refer.headers.get('Refer-To')).toBe('<sip:desk@pbx.example>');
    expect(refer.headers.get('X-Reason')).toBe('sales');
    const referredBy = parseNameAddr(refer.headers.get('Referred-By')!);
    expect(referredBy?.uri).toMatchObject({ user: '+15550100', host: '127.0.0.1' });
    // The BYE is the layer's own (far.ended above); nothing else reached the far end.
    expect(far.requests.map((r) => r.method)).toEqual(['REFER']);
    expect(dialog.state).toBe('terminated');
  });

  it('sends a number to the peer host', async () => {
    const far = await startFarEnd();
    far.onRequest = (f, dialog, request, transaction) => {
      f.layer.respond(dialog, request, transaction, request.method === 'REFER' ? 202 : 200);
      if (request.method === 'REFER') {
        f.notify(dialog, 'SIP/2.0 200 OK', 'terminated');
      }
    };
    const { agent, dialog } = await callFarEnd(far);
    const leg = new SipTelephonyLeg({ agent, dialog, rtp: noRtp });
    expect(await leg.transfer({ type: 'number', number: '+15557654321' })).toEqual({ ok: true });
    const refer = far.requests.find((r) => r.method === 'REFER')!;
    expect(refer.headers.get('Refer-To')).toBe(`<sip:+15557654321@127.0.0.1:${far.port}>`);
  });

  it('REFER refused (405, 501, 603): transfer-refused, the call stays up', async () => {
    for (const status of [405, 501, 603]) {
      const far = await startFarEnd();
      far.onRequest = (f, dialog, request, transaction) =>
        f.layer.respond(dialog, request, transaction, request.method === 'REFER' ? status : 200);
      const { agent, dialog } = await callFarEnd(far);
      const leg = new SipTelephonyLeg({ agent, dialog, rtp: noRtp });
      const outcome = await leg.transfer({ type: 'sip', sipUri: 'sip:desk@pbx.example' });
      expect(outcome).toMatchObject({ ok: false, code: 'transfer-refused' });
      expect(outcome.ok ? '' : outcome.message).toContain(String(status));
      expect(leg.transferAccepted).toBe(false);
      expect(dialog.state).toBe('confirmed');
      expect(far.ended).toEqual([]);
    }
  });

  it('REFER 481, 408 or 404: transfer-failed without a bridge, no third party is dialled', async () => {
    // 481 and 408 also end the dialog at the dialog layer; 404 (RFC 5057) leaves it to us.
    for (const status of [481, 408, 404]) {
      const far = await startFarEnd();
      far.onRequest = (f, dialog, request, transaction) =>
        f.layer.respond(dialog, request, transaction, request.method === 'REFER' ? status : 200);
      const { agent, dialog } = await callFarEnd(far);
      const { leg, bridged } = legWithBridge(agent, dialog);
      const outcome = await leg.transfer({ type: 'sip', sipUri: 'sip:desk@pbx.example' });
      expect(outcome).toMatchObject({ ok: false, code: 'transfer-failed' });
      expect(outcome.ok ? '' : outcome.message).toContain(`${status}`);
      expect(outcome.ok ? '' : outcome.message).toContain('no one else is dialled');
      expect(bridged).toEqual([]);
    }
  });

  it('REFER 491: asks once more after the RFC 3261 wait, then bridges a refusal', async () => {
    const far = await startFarEnd();
    let refers = 0;
    far.onRequest = (f, dialog, request, transaction) => {
      if (request.method === 'REFER') {
        refers++;
      }
      const status = request.method !== 'REFER' ? 200 : refers === 1 ? 491 : 405;
      f.layer.respond(dialog, request, transaction, status);
    };
    const { agent, dialog } = await callFarEnd(far);
    const { leg, bridged: asked } = legWithBridge(agent, dialog);
    expect(await leg.transfer({ type: 'sip', sipUri: 'sip:desk@pbx.example' })).toEqual({
      ok: true,
    });
    expect(refers).toBe(2);
    expect(asked).toHaveLength(1);
  }, 15_000);

  it('sipVerb dial: no REFER, Parla dials and bridges (refused without a bridge)', async () => {
    const far = await startFarEnd();
    const { agent, dialog } = await callFarEnd(far);
    const dial = {
      type: 'number',
      number: '+15557654321',
      extension: '42',
      transferPlan: { sipVerb: 'dial' },
    };
    const { leg, bridged: asked } = legWithBridge(agent, dialog);
    expect(await leg.transfer(dial)).toEqual({ ok: true });
    expect(asked).toEqual([dial]);
    expect(far.requests.map((r) => r.method)).toEqual([]);
    const plain = new SipTelephonyLeg({ agent, dialog, rtp: noRtp });
    expect(await plain.transfer(dial)).toMatchObject({ code: 'transfer-not-supported' });
  });

  it('NOTIFY 486: transfer-failed, no BYE', async () => {
    const far = await startFarEnd();
    far.onRequest = (f, dialog, request, transaction) => {
      f.layer.respond(dialog, request, transaction, request.method === 'REFER' ? 202 : 200);
      if (request.method === 'REFER') {
        f.notify(dialog, 'SIP/2.0 180 Ringing', 'active;expires=60');
        setTimeout(() => f.notify(dialog, 'SIP/2.0 486 Busy Here', 'terminated'), 50);
      }
    };
    const { agent, dialog } = await callFarEnd(far);
    // The transferee took the REFER: its failure is the outcome, not a case for a bridge.
    const { leg, bridged } = legWithBridge(agent, dialog);
    const outcome = await leg.transfer({ type: 'sip', sipUri: 'sip:desk@pbx.example' });
    expect(outcome).toMatchObject({ ok: false, code: 'transfer-failed' });
    expect(outcome.ok ? '' : outcome.message).toContain('486');
    expect(bridged).toEqual([]);
    expect(dialog.state).toBe('confirmed');
    expect(far.requests.map((r) => r.method)).toEqual(['REFER']);
  });

  it('no final NOTIFY within transferPlan.timeout: transfer-timeout', async () => {
    const far = await startFarEnd();
    far.onRequest = (f, dialog, request, transaction) =>
      f.layer.respond(dialog, request, transaction, request.method === 'REFER' ? 202 : 200);
    const { agent, dialog } = await callFarEnd(far);
    const leg = new SipTelephonyLeg({ agent, dialog, rtp: noRtp });
    const outcome = await leg.transfer({
      type: 'sip',
      sipUri: 'sip:desk@pbx.example',
      transferPlan: { timeout: 0.3 },
    });
    expect(outcome).toMatchObject({ ok: false, code: 'transfer-timeout' });
    expect(leg.transferAccepted).toBe(true);
  });

  it('the far end hangs up after its 202: transferred once the dialog ends', async () => {
    const far = await startFarEnd();
    far.onRequest = (f, dialog, request, transaction) => {
      f.layer.respond(dialog, request, transaction, request.method === 'REFER' ? 202 : 200);
      if (request.method === 'REFER') {
        f.notify(dialog, 'SIP/2.0 100 Trying', 'active;expires=60');
        setTimeout(() => void f.layer.bye(dialog), 50);
      }
    };
    const { agent, dialog, ended } = await callFarEnd(far);
    const leg = new SipTelephonyLeg({ agent, dialog, rtp: noRtp });
    const pending = leg.transfer({ type: 'sip', sipUri: 'sip:desk@pbx.example' });
    // What the call layer does in its onDialogEnded.
    await expect.poll(() => ended, { timeout: 10_000 }).toEqual(['remote-bye']);
    expect(leg.transferAccepted).toBe(true);
    leg.onDialogEnded();
    expect(await pending).toEqual({ ok: true });
  });

  it('refuses transfer modes it does not do', async () => {
    const far = await startFarEnd();
    const { agent, dialog } = await callFarEnd(far);
    const leg = new SipTelephonyLeg({ agent, dialog, rtp: noRtp });
    const outcome = await leg.transfer({
      type: 'sip',
      sipUri: 'sip:desk@pbx.example',
      transferPlan: { mode: 'warm-transfer-say-message' },
    });
    expect(outcome).toMatchObject({ ok: false, code: 'transfer-not-supported' });
    expect(far.requests).toEqual([]);
  });

  it('sends DTMF as SIP INFO (application/dtmf-relay) without telephone-event', async () => {
    const far = await startFarEnd();
    const { agent, dialog } = await callFarEnd(far);
    const leg = new SipTelephonyLeg({ agent, dialog, rtp: noRtp });
    await leg.sendDtmf('1#');
    const infos = far.requests.filter((r) => r.method === 'INFO');
    expect(infos.map((r) => r.headers.get('Content-Type'))).toEqual([
      'application/dtmf-relay',
      'application/dtmf-relay',
    ]);
    expect(infos.map((r) => r.body.toString())).toEqual([
      'Signal=1\r\nDuration=100\r\n',
      'Signal=#\r\nDuration=100\r\n',
    ]);
    await expect(leg.sendDtmf('1x')).rejects.toMatchObject({ code: 'invalid-dtmf' });
  });

  it('sends DTMF as RFC 4733 events on the call RTP, captured by the far end', async () => {
    const far = await startFarEnd();
    const { agent, dialog } = await callFarEnd(far);
    const minPort = 40_000 + 2 * Math.floor(Math.random() * 4000);
    const allocator = new RtpPortAllocator({ minPort, maxPort: minPort + 19 });
    const base = {
      allocator,
      bindAddress: '127.0.0.1',
      codec: 'PCMU' as const,
      payloadType: 0,
      telephoneEventPayloadType: 101,
    };
    const digits: DtmfDigitEvent[] = [];
    const ours = await RtpSession.open(base);
    const theirs = await RtpSession.open({ ...base, onDtmf: (event) => digits.push(event) });
    cleanups.push(
      () => ours.close(),
      () => theirs.close(),
    );
    ours.setRemote({ address: '127.0.0.1', port: theirs.localPort });
    // The media clock of the call: a frame every 20 ms.
    const frame = new Int16Array(160);
    const clock = setInterval(() => ours.sendFrame(frame), 20);
    cleanups.push(() => clearInterval(clock));
    const leg = new SipTelephonyLeg({ agent, dialog, rtp: ours });
    await leg.sendDtmf('4w2');
    await expect.poll(() => digits.map((d) => d.digit), { timeout: 5000 }).toEqual(['4', '2']);
    expect(digits.every((d) => d.durationMs === 100)).toBe(true);
    expect(far.requests.filter((r) => r.method === 'INFO')).toEqual([]);
  });
});

async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  const port = socket.address().port;
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

/** SIPp as the transferee (a one-call UAS); our INVITE retransmits until it has bound. */
async function startSipp(scenario: string) {
  const port = await freeUdpPort();
  const workDir = mkdtempSync(join(tmpdir(), 'parla-sipp-transfer-'));
  cleanups.push(() => rmSync(workDir, { recursive: true, force: true }));
  const exited = runSipp(
    [
      '-sf',
      join(SCENARIOS, scenario),
      '-i',
      '127.0.0.1',
      '-p',
      String(port),
      '-t',
      'u1',
      '-m',
      '1',
      '-nostdin',
      '-timeout',
      '30s',
      '-timeout_error',
      '-trace_err',
    ],
    workDir,
  );
  return { port, exited };
}

describe.skipIf(!hasSipp)('SipTelephonyLeg against SIPp as the transferee', () => {
  // A short timeout: when SIPp rejects what it got it just stops answering.
  const destination = {
    type: 'sip',
    sipUri: 'sip:desk@pbx.example',
    transferPlan: { timeout: 15 },
  };

  it('REFER 202, NOTIFY 100 then 200: transferred, and SIPp gets our BYE', async () => {
    const sipp = await startSipp('transfer-accepted.xml');
    const { agent, dialog } = await callFarEnd(sipp);
    const leg = new SipTelephonyLeg({ agent, dialog, rtp: noRtp });
    expect(await leg.transfer(destination)).toEqual({ ok: true });
    const result = await sipp.exited;
    expect(result.code, result.output).toBe(0);
  });

  it('REFER 405: transfer-refused, the call stays up until we hang up', async () => {
    const sipp = await startSipp('transfer-refused.xml');
    const { agent, dialog } = await callFarEnd(sipp);
    const leg = new SipTelephonyLeg({ agent, dialog, rtp: noRtp });
    const refused = await leg.transfer(destination);
    expect(refused).toMatchObject({ ok: false, code: 'transfer-refused' });
    expect(dialog.state).toBe('confirmed');
    await agent.hangUp(dialog);
    const result = await sipp.exited;
    expect(result.code, result.output).toBe(0);
  });

  it('NOTIFY 486: transfer-failed, the call stays up until we hang up', async () => {
    const sipp = await startSipp('transfer-busy.xml');
    const { agent, dialog } = await callFarEnd(sipp);
    const leg = new SipTelephonyLeg({ agent, dialog, rtp: noRtp });
    const outcome = await leg.transfer(destination);
    expect(outcome).toMatchObject({ ok: false, code: 'transfer-failed' });
    expect(outcome.ok ? '' : outcome.message).toContain('486');
    await agent.hangUp(dialog);
    const result = await sipp.exited;
    expect(result.code, result.output).toBe(0);
  });
});

describe.skipIf(!hasSipp)('SipTelephonyLeg on an inbound call from SIPp', () => {
  it('transfers the caller to a number at the trunk: REFER, NOTIFY 100 and 200, BYE', async () => {
    const answered: { dialog?: SipDialog } = {};
    const agent = await SipUserAgent.start({
      host: '127.0.0.1',
      port: 0,
      tcp: false,
      handler: {
        onInvite: (invite) => {
          const sdp = [
            'v=0',
            'o=parla 1 1 IN IP4 127.0.0.1',
            's=-',
            'c=IN IP4 127.0.0.1',
            't=0 0',
            'm=audio 40000 RTP/AVP 0 101',
            'a=rtpmap:0 PCMU/8000',
            'a=rtpmap:101 telephone-event/8000',
            '',
          ].join('\r\n');
          const dialog = agent.dialogs.accept(invite, {
            body: Buffer.from(sdp),
            contentType: 'application/sdp',
          });
          if (dialog !== undefined) {
            answered.dialog = dialog;
          }
        },
        onCancel: () => {},
        onDialogEnded: () => {},
      },
    });
    cleanups.push(() => agent.close());
    const workDir = mkdtempSync(join(tmpdir(), 'parla-sipp-transfer-'));
    cleanups.push(() => rmSync(workDir, { recursive: true, force: true }));
    const sipp = runSipp(
      [
        `127.0.0.1:${agent.port}`,
        '-sf',
        join(SCENARIOS, 'transfer-inbound.xml'),
        '-s',
        '+15550100',
        '-i',
        '127.0.0.1',
        '-p',
        '0',
        '-m',
        '1',
        '-nostdin',
        '-timeout',
        '30s',
        '-timeout_error',
      ],
      workDir,
    );
    await expect.poll(() => answered.dialog, { timeout: 10_000 }).toBeDefined();
    const dialog = answered.dialog!;
    const leg = new SipTelephonyLeg({ agent, dialog, rtp: noRtp });
    const outcome = await leg.transfer({
      type: 'number',
      number: '+15550199',
      transferPlan: { timeout: 15 },
    });
    expect(outcome).toEqual({ ok: true });
    const result = await sipp;
    expect(result.code, result.output).toBe(0);
    expect(dialog.state).toBe('terminated');
  });
});
