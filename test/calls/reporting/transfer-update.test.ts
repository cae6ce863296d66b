/**
 * `transfer-update` as the server and the client get it: the event a transfer reports as it
 * starts, through the real reporter to a webhook receiver (when subscribed in serverMessages),
 * and through the client message selector (in the default clientMessages).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createCallReporter } from '../../../src/calls/reporting/call-reporter.js';
import { loadPriceTable } from '../../../src/calls/reporting/price-table.js';
import { transferUpdateEvent } from '../../../src/calls/reporting/transfer-update.js';
import type { Doc } from '../../../src/store/resource-store.js';
import { ClientMessageSelector } from '../../../src/transports/websocket/client-messages.js';
import { useHarness } from '../../support/app-harness.js';
import { storeTargets } from '../../support/store-targets.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';

const h = useHarness(storeTargets()[0]!);
const prices = loadPriceTable();
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await WebhookReceiver.start();
});
afterAll(async () => {
  await receiver.close();
});
beforeEach(() => {
  receiver.clear();
});

const destination = {
  type: 'number',
  number: '+15550199',
  extension: '42',
  transferPlan: { mode: 'blind-transfer' },
};

function reporter(assistant: Doc) {
  return createCallReporter({
    orgId: h.orgA,
    call: { id: `call-${Math.random().toString(36).slice(2)}`, type: 'inboundPhoneCall' },
    store: h.store,
    filesDir: join(h.dataDir, 'files'),
    publicUrl: 'http://parla.test',
    prices,
    assistant: { ...assistant, artifactPlan: { recordingEnabled: false } },
  });
}

describe('transfer-update', () => {
  it('reaches the server with the destination when subscribed', async () => {
    const r = reporter({
      name: 'Desk',
      server: { url: `${receiver.url}/hook` },
      serverMessages: ['status-update', 'transfer-update'],
    });
    r.onPipelineEvent(transferUpdateEvent(destination, 1000)!);
    await r.drained();
    const [request] = receiver.messages('transfer-update');
    expect(request?.path).toBe('/hook');
    expect(request?.body.message).toMatchObject({
      type: 'transfer-update',
      destination,
      call: { type: 'inboundPhoneCall' },
      assistant: { name: 'Desk' },
    });
  });

  it('is not sent to a server that did not subscribe (not a default server message)', async () => {
    const r = reporter({ server: { url: `${receiver.url}/hook` } });
    r.onPipelineEvent(transferUpdateEvent(destination, 1000)!);
    await r.drained();
    expect(receiver.messages('transfer-update')).toEqual([]);
  });

  it('is a default client message, shaped {type, destination}', () => {
    const event = transferUpdateEvent({ type: 'sip', sipUri: 'sip:desk@pbx.example' }, 5)!;
    expect(new ClientMessageSelector(undefined).select(event)).toEqual({
      type: 'transfer-update',
      destination: { type: 'sip', sipUri: 'sip:desk@pbx.example' },
    });
    expect(new ClientMessageSelector(['status-update']).select(event)).toBeNull();
  });

  it('is only for number and SIP destinations', () => {
    expect(transferUpdateEvent({ type: 'assistant', assistantName: 'B' }, 0)).toBeUndefined();
  });
});
