import { describe, expect, it } from 'vitest';
import { checkControlMessage, parseControlMessage } from '../../src/calls/control-messages.js';

describe('control messages', () => {
  it('accepts every documented kind', () => {
    const good = [
      { type: 'say', content: 'hi', endCallAfterSpoken: false, interruptAssistantEnabled: true },
      {
        type: 'add-message',
        message: { role: 'system', content: 'x' },
        triggerResponseEnabled: false,
      },
      { type: 'control', control: 'mute-assistant' },
      { type: 'control', control: 'unmute-customer' },
      { type: 'control', control: 'say-first-message' },
      { type: 'end-call' },
      { type: 'hangup' },
      { type: 'transfer', destination: { type: 'number', number: '+14155550100' }, content: 'bye' },
      { type: 'transfer', destination: { type: 'sip', sipUri: 'sip:a@b.c' } },
    ];
    for (const message of good) {
      expect(checkControlMessage(message)).toEqual({ ok: true, message });
    }
  });

  it('names the problem with a stable code', () => {
    const cases: [unknown, string, string][] = [
      [[], 'invalid-message', 'must be a JSON object'],
      [{ content: 'x' }, 'invalid-message', 'string `type`'],
      [{ type: 'dance' }, 'unknown-message-type', 'Unknown control message type "dance"'],
      [{ type: 'say' }, 'invalid-message', 'say:'],
      [{ type: 'say', content: 'x'.repeat(10_001) }, 'invalid-message', 'content'],
      [{ type: 'say', content: 'x', extra: 1 }, 'invalid-message', 'say:'],
      [{ type: 'control', control: 'explode' }, 'invalid-message', 'control'],
      [
        { type: 'add-message', message: { role: 'robot', content: 'x' } },
        'invalid-message',
        'role',
      ],
      [
        { type: 'transfer', destination: { type: 'sip', sipUri: 'http://x' } },
        'invalid-message',
        'destination',
      ],
    ];
    for (const [value, code, text] of cases) {
      const result = checkControlMessage(value);
      expect(result.ok).toBe(false);
      expect(result).toMatchObject({ code });
      expect((result as { error: string }).error).toContain(text);
    }
  });

  it('parses text frames and refuses prototype poisoning', () => {
    expect(parseControlMessage('{"type":"end-call"}')).toEqual({
      ok: true,
      message: { type: 'end-call' },
    });
    expect(parseControlMessage('nope')).toMatchObject({ ok: false, code: 'invalid-json' });
    expect(parseControlMessage('{"type":"say","__proto__":{"x":1}}')).toMatchObject({
      ok: false,
      code: 'invalid-json',
    });
  });
});
