/**
 * Numbers without an assistant whose `assistant-request` goes to a local webhook receiver, for
 * the SIP tests of inbound routing: each number gets a path of its own on the receiver and the
 * reply scripted for it.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import type { Doc } from '../../src/store/resource-store.js';
import { WebhookReceiver, type ReceivedRequest, type Reply } from '../support/webhook-receiver.js';
import type { SipHarness } from './sip-call-harness.js';

export interface AssistantRequestNumbers {
  /** A trunk allowing 127.0.0.1 and a number on it with the given fields (no assistant). */
  readonly numberWith: (fields: Doc) => Promise<{ number: string; phoneNumberId: string }>;
  /** Number fields whose assistant-request is answered with `reply` (server fields merged). */
  readonly serverAnswering: (reply: Reply, serverFields?: Doc) => Doc;
  /** The number's call once it is stored ended (20 s at most). */
  readonly endedCall: (phoneNumberId: string) => Promise<Doc>;
  /** The requests the receiver had for the server of `fields` (from serverAnswering). */
  readonly requestsTo: (fields: Doc) => ReceivedRequest[];
}

/** `firstNumber` keeps the numbers of test files sharing a store apart. */
export function useAssistantRequestNumbers(
  h: SipHarness,
  firstNumber: number,
): AssistantRequestNumbers {
  let server: WebhookReceiver;
  /** Reply per request path (`/<n>`); the default is an empty 200. */
  const replies = new Map<string, Reply>();
  beforeAll(async () => {
    server = await WebhookReceiver.start();
    server.respond((request) => replies.get(request.path) ?? { status: 200, body: {} });
  });
  afterAll(() => server.close());
  let nextNumber = firstNumber;
  const pathOf = (fields: Doc): string => new URL((fields.server as Doc).url as string).pathname;
  return {
    numberWith: async (fields) => {
      const number = `+1555200${String(nextNumber++).padStart(4, '0')}`;
      const [trunkStatus, trunk] = await h.post('/credential', {
        provider: 'byo-sip-trunk',
        gateways: [{ ip: '127.0.0.1' }],
      });
      expect(trunkStatus).toBe(201);
      const [status, created] = await h.post('/phone-number', {
        provider: 'byo-phone-number',
        number,
        credentialId: trunk.id,
        ...fields,
      });
      expect(status, JSON.stringify(created)).toBe(201);
      return { number, phoneNumberId: created.id as string };
    },
    serverAnswering: (reply, serverFields = {}) => {
      const path = `/${replies.size}`;
      replies.set(path, reply);
      return { server: { url: `${server.url}${path}`, ...serverFields } };
    },
    endedCall: async (phoneNumberId) => {
      const deadline = Date.now() + 20_000;
      let call: Doc | undefined;
      while (Date.now() < deadline) {
        call = (await h.callsOf(phoneNumberId))[0];
        if (call?.status === 'ended') {
          return call;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`call not ended: ${JSON.stringify(call)}`);
    },
    requestsTo: (fields) => server.requests.filter((request) => request.path === pathOf(fields)),
  };
}
