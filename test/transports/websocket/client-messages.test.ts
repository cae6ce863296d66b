import { describe, expect, it } from 'vitest';
import { ClientMessageSelector } from '../../../src/transports/websocket/client-messages.js';

describe('ClientMessageSelector', () => {
  it('sends the default kinds as bare objects without the media-clock time', () => {
    const selector = new ClientMessageSelector(undefined);
    const speech = { type: 'speech-update', atMs: 40, role: 'user', status: 'started', turn: 0 };
    expect(selector.select(speech)).toEqual({
      type: 'speech-update',
      role: 'user',
      status: 'started',
      turn: 0,
    });
    expect(selector.select({ type: 'metrics', atMs: 1, latency: {} })).toBeNull();
    expect(selector.select({ type: 'call-ended', atMs: 1, endedReason: 'x' })).toBeNull();
  });

  it('follows assistant.clientMessages, including the final-transcript subscription', () => {
    const selector = new ClientMessageSelector(['transcript[transcriptType="final"]']);
    const partial = {
      type: 'transcript',
      atMs: 0,
      role: 'user',
      transcriptType: 'partial',
      transcript: 'he',
    };
    const final = { ...partial, transcriptType: 'final', transcript: 'hello' };
    expect(selector.select(partial)).toBeNull();
    expect(selector.select(final)).toEqual({
      type: 'transcript[transcriptType="final"]',
      role: 'user',
      transcriptType: 'final',
      transcript: 'hello',
    });
    expect(selector.select({ type: 'hang', atMs: 0 })).toBeNull();
    expect(new ClientMessageSelector([]).select({ type: 'hang', atMs: 0 })).toBeNull();
  });

  it('shapes conversation updates and tool calls like the platform', () => {
    const selector = new ClientMessageSelector(undefined);
    const messages = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ];
    expect(selector.select({ type: 'conversation-update', atMs: 0, messages })).toEqual({
      type: 'conversation-update',
      messages: [
        { role: 'system', message: 'be brief' },
        { role: 'user', message: 'hi' },
        { role: 'bot', message: 'hello' },
      ],
      messagesOpenAIFormatted: messages,
    });
    const toolCalls = [{ id: 't1', name: 'lookup', arguments: '{"a":1}' }];
    expect(selector.select({ type: 'tool-calls', atMs: 0, turnId: 1, toolCalls })).toEqual({
      type: 'tool-calls',
      toolCallList: [
        {
          id: 't1',
          type: 'function',
          function: { name: 'lookup', arguments: '{"a":1}' },
          name: 'lookup',
          arguments: { a: 1 },
          parameters: { a: 1 },
        },
      ],
      toolWithToolCallList: [
        {
          type: 'function',
          function: { name: 'lookup', arguments: '{"a":1}' },
          toolCall: expect.objectContaining({ id: 't1' }),
        },
      ],
    });
  });
});
