import { describe, expect, it } from 'vitest';
import {
  functionCallFields,
  parseFunctionCallReply,
} from '../../../src/calls/reporting/server-messages.js';
import { parseTransferDestinationReply } from '../../../src/calls/reporting/transfer-destination-reply.js';
import type { WebhookOutcome } from '../../../src/calls/reporting/webhook-sender.js';

const ok = (reply: unknown): WebhookOutcome => ({ ok: true, status: 200, reply, attempts: 1 });

describe('parseTransferDestinationReply', () => {
  it('takes a checked destination and its spoken message', () => {
    const destination = { type: 'number', number: '+14155550123', extension: '12' };
    expect(parseTransferDestinationReply(ok({ destination, message: 'Connecting you.' }))).toEqual({
      destination,
      message: 'Connecting you.',
    });
    // A ToolMessage object gives its content.
    const sip = { type: 'sip', sipUri: 'sip:desk@example.com' };
    expect(
      parseTransferDestinationReply(
        ok({ destination: sip, message: { type: 'request-start', content: 'One moment.' } }),
      ),
    ).toEqual({ destination: sip, message: 'One moment.' });
    const assistant = { type: 'assistant', assistantName: 'Billing' };
    expect(parseTransferDestinationReply(ok({ destination: assistant }))).toEqual({
      destination: assistant,
    });
    const local = { type: 'number', number: '1001', numberE164CheckEnabled: false };
    expect(parseTransferDestinationReply(ok({ destination: local })).destination).toEqual(local);
  });

  it('lets an error win and bounds what is spoken', () => {
    expect(
      parseTransferDestinationReply(
        ok({ error: 'Nobody is available.', destination: { type: 'number', number: '+1415' } }),
      ),
    ).toEqual({ error: 'Nobody is available.' });
    expect(parseTransferDestinationReply(ok({ error: 'x'.repeat(5000) })).error).toHaveLength(1000);
  });

  it('names the problem of unusable replies and gives neither destination nor error', () => {
    const cases: [WebhookOutcome, string][] = [
      [{ ok: false, status: 503, reply: undefined, error: 'HTTP 503', attempts: 1 }, 'HTTP 503'],
      [
        { ok: true, status: 200, reply: undefined, error: 'the reply is not JSON', attempts: 1 },
        'not JSON',
      ],
      [ok(undefined), 'not an object'],
      [ok({}), 'no destination'],
      [ok({ destination: 'tel:+1' }), 'no destination'],
      [ok({ destination: { type: 'number', number: '0800 123' } }), 'not E.164'],
      [ok({ destination: { type: 'number', number: '+1' } }), '3 to 40'],
      [ok({ destination: { type: 'sip', sipUri: 'http://x' } }), 'sip: or sips:'],
      [ok({ destination: { type: 'assistant' } }), 'assistantName'],
      [ok({ destination: { type: 'pigeon' } }), 'not number, sip or assistant'],
      [
        ok({
          destination: { type: 'number', number: '+14155550123', description: 'x'.repeat(20_000) },
        }),
        'larger than',
      ],
    ];
    for (const [outcome, problem] of cases) {
      const parsed = parseTransferDestinationReply(outcome);
      expect(parsed.destination).toBeUndefined();
      expect(parsed.error).toBeUndefined();
      expect(parsed.problem).toContain(problem);
    }
  });
});

describe('legacy function-call', () => {
  const call = { id: 'f1', name: 'lookup', arguments: '{"order":42}' };

  it('sends the name and the parsed parameters', () => {
    expect(functionCallFields(call)).toEqual({
      functionCall: { name: 'lookup', parameters: { order: 42 } },
    });
    expect(functionCallFields({ ...call, arguments: 'not json' })).toEqual({
      functionCall: { name: 'lookup', parameters: {} },
    });
  });

  it('reads {result} or {error}, and turns failures into error results', () => {
    expect(parseFunctionCallReply(call, ok({ result: 'shipped' }))).toEqual({
      toolCallId: 'f1',
      name: 'lookup',
      result: 'shipped',
    });
    expect(parseFunctionCallReply(call, ok({ result: { eta: 2 } })).result).toBe('{"eta":2}');
    expect(parseFunctionCallReply(call, ok({ error: 'no such order' })).error).toBe(
      'no such order',
    );
    expect(parseFunctionCallReply(call, ok({})).error).toBe(
      'the function server replied without a result',
    );
    expect(
      parseFunctionCallReply(call, {
        ok: false,
        status: null,
        reply: undefined,
        error: 'no reply within 20 s',
        attempts: 1,
      }).error,
    ).toBe('the function server failed: no reply within 20 s');
  });
});
