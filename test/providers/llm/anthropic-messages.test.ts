import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { AnthropicMessagesProvider } from '../../../src/providers/llm/anthropic-messages.js';
import type { ModelEvent, ModelRequest } from '../../../src/providers/llm/model-provider.js';
import { ProviderError } from '../../../src/providers/provider-error.js';
import { FakeAnthropicServer, sseEvent } from '../../support/fake-anthropic-server.js';

const fake = new FakeAnthropicServer();
let provider: AnthropicMessagesProvider;

beforeAll(async () => {
  await fake.start();
  provider = new AnthropicMessagesProvider({ baseUrl: fake.url, firstByteTimeoutMs: 500 });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

function request(extra: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: 'claude-sonnet-4-5',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ],
    apiKey: 'sk-ant-test',
    ...extra,
  };
}

async function collect(events: AsyncIterable<ModelEvent>): Promise<ModelEvent[]> {
  const out: ModelEvent[] = [];
  for await (const event of events) {
    out.push(event);
  }
  return out;
}

function run(extra: Partial<ModelRequest> = {}): Promise<ModelEvent[]> {
  return collect(provider.stream(request(extra), new AbortController().signal));
}

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

describe('AnthropicMessagesProvider', () => {
  it('streams text deltas, usage and done, sending the Messages wire request', async () => {
    fake.enqueue({ chunks: ['Hel', 'lo', '!'], usage: { input_tokens: 9, output_tokens: 3 } });
    const events = await run({ temperature: 0.2, maxTokens: 50 });
    expect(events).toEqual([
      { type: 'text', delta: 'Hel' },
      { type: 'text', delta: 'lo' },
      { type: 'text', delta: '!' },
      { type: 'usage', promptTokens: 9, completionTokens: 3 },
      { type: 'done', finishReason: 'stop' },
    ]);
    const sent = fake.requests[0];
    expect(sent?.path).toBe('/v1/messages');
    expect(sent?.headers['x-api-key']).toBe('sk-ant-test');
    expect(sent?.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent?.headers.authorization).toBeUndefined();
    expect(fake.sentBody(0)).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 50,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
      temperature: 0.2,
    });
  });

  it('takes every system message into `system` and defaults max_tokens', async () => {
    fake.enqueue({ chunks: ['ok'] });
    await run({
      messages: [
        { role: 'system', content: 'One.' },
        { role: 'user', content: 'Hi' },
        { role: 'system', content: 'Two.' },
        { role: 'user', content: 'Again' },
      ],
    });
    const body = fake.sentBody(0);
    expect(body.system).toBe('One.\n\nTwo.');
    expect(body.max_tokens).toBe(4096);
    // The two user turns are merged: the API wants roles to alternate.
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Hi' },
          { type: 'text', text: 'Again' },
        ],
      },
    ]);
  });

  it('assembles tool_use input from input_json_delta pieces and maps tool_use to tool_calls', async () => {
    fake.enqueue({
      chunks: ['Checking.'],
      toolUses: [
        { id: 'toolu_1', name: 'lookup', inputChunks: ['{"ci', 'ty": "Par', 'is"}'] },
        { id: 'toolu_2', name: 'now', inputChunks: [] },
      ],
    });
    const events = await run({
      tools: [
        {
          name: 'lookup',
          description: 'Finds a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
        },
        { name: 'now' },
      ],
    });
    expect(events).toEqual([
      { type: 'text', delta: 'Checking.' },
      {
        type: 'tool-call',
        call: { id: 'toolu_1', name: 'lookup', arguments: '{"city": "Paris"}' },
      },
      { type: 'tool-call', call: { id: 'toolu_2', name: 'now', arguments: '{}' } },
      { type: 'usage', promptTokens: 12, completionTokens: 7 },
      { type: 'done', finishReason: 'tool_calls' },
    ]);
    expect(fake.sentBody(0).tools).toEqual([
      {
        name: 'lookup',
        description: 'Finds a city',
        input_schema: { type: 'object', properties: { city: { type: 'string' } } },
      },
      { name: 'now', input_schema: { type: 'object', properties: {} } },
    ]);
  });

  it('sends assistant tool calls as tool_use blocks and tool results as user tool_result blocks', async () => {
    fake.enqueue({ chunks: ['Sunny.'] });
    await run({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: 'Looking.',
          toolCalls: [
            { id: 'toolu_1', name: 'weather', arguments: '{"city":"Paris"}' },
            { id: 'toolu_2', name: 'time', arguments: '' },
          ],
        },
        { role: 'tool', content: '{"sky":"clear"}', toolCallId: 'toolu_1' },
        { role: 'tool', content: '12:00', toolCallId: 'toolu_2' },
      ],
    });
    expect(fake.sentBody(0).messages).toEqual([
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking.' },
          { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_2', name: 'time', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: '{"sky":"clear"}' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: '12:00' },
        ],
      },
    ]);
  });

  it('maps max_tokens to length and counts cached input tokens', async () => {
    fake.enqueue({
      rawEvents: [
        sseEvent({
          type: 'message_start',
          message: {
            usage: { input_tokens: 5, cache_read_input_tokens: 10, output_tokens: 1 },
          },
        }),
        sseEvent({
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'text', text: '' },
        }),
        sseEvent({
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'text_delta', text: 'x' },
        }),
        sseEvent({ type: 'content_block_stop', index: 0 }),
        sseEvent({
          type: 'message_delta',
          delta: { stop_reason: 'max_tokens' },
          usage: { output_tokens: 2 },
        }),
        sseEvent({ type: 'some_future_event' }),
        sseEvent({ type: 'message_stop' }),
      ],
    });
    expect(await run()).toEqual([
      { type: 'text', delta: 'x' },
      { type: 'usage', promptTokens: 15, completionTokens: 2 },
      { type: 'done', finishReason: 'length' },
    ]);
  });

  it.each([
    [401, 'authentication_error', false],
    [429, 'rate_limit_error', true],
    [529, 'overloaded_error', true],
    [500, 'api_error', true],
    [400, 'invalid_request_error', false],
  ])('maps HTTP %i to a ProviderError with the vendor status', async (status, type, retryable) => {
    fake.enqueue({ status, errorType: type, errorMessage: `nope ${type}` });
    const error = await failure(run());
    expect(error.vendorStatus).toBe(status);
    expect(error.retryable).toBe(retryable);
    expect(error.message).toBe(`anthropic: HTTP ${status}: nope ${type}`);
  });

  it('turns an in-stream error event into a ProviderError with the matching status', async () => {
    fake.enqueue({
      rawEvents: [
        sseEvent({ type: 'message_start', message: { usage: { input_tokens: 1 } } }),
        sseEvent({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
      ],
    });
    const error = await failure(run());
    expect(error.vendorStatus).toBe(529);
    expect(error.retryable).toBe(true);
    expect(error.message).toBe('anthropic: stream error: overloaded_error: Overloaded');
  });

  it('cancels the vendor request when the signal aborts', async () => {
    fake.enqueue({ chunks: ['a', 'b', 'c', 'd', 'e'], chunkDelayMs: 200 });
    const controller = new AbortController();
    const seen: ModelEvent[] = [];
    const reading = (async () => {
      for await (const event of provider.stream(request(), controller.signal)) {
        seen.push(event);
        if (event.type === 'text') {
          controller.abort(new Error('caller gave up'));
        }
      }
    })();
    await expect(reading).rejects.toThrow('caller gave up');
    expect(seen).toEqual([{ type: 'text', delta: 'a' }]);
    await vi.waitFor(() => expect(fake.requests[0]?.aborted).toBe(true));
  });

  it('throws the reason at once when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('already'));
    await expect(collect(provider.stream(request(), controller.signal))).rejects.toThrow('already');
    expect(fake.requests).toHaveLength(0);
  });

  it('gives up with a timeout error when the first byte is late', async () => {
    fake.enqueue({ chunks: ['late'], delayMs: 2000 });
    const error = await failure(run());
    expect(error.code).toBe('ERR_PROVIDER_TIMEOUT');
    expect(error.retryable).toBe(true);
    await vi.waitFor(() => expect(fake.requests[0]?.aborted).toBe(true));
  });

  it('reports a malformed data line clearly, as not retryable', async () => {
    fake.enqueue({ rawEvents: [sseEvent({ type: 'ping' }), 'event: x\ndata: {oops'] });
    const error = await failure(run());
    expect(error.message).toBe('anthropic: malformed line in the reply stream: "data: {oops"');
    expect(error.retryable).toBe(false);
  });

  it('rejects a body that is not an event stream and a data line without a type', async () => {
    fake.enqueue({ rawEvents: ['<html>oops</html>'] }, { rawEvents: ['data: {"index":0}'] });
    expect((await failure(run())).message).toContain('malformed line in the reply stream');
    expect((await failure(run())).message).toContain('malformed line in the reply stream');
  });

  it('treats a stream cut off before message_stop as a retryable failure', async () => {
    fake.enqueue({
      rawEvents: [
        sseEvent({
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'text', text: '' },
        }),
        sseEvent({
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'text_delta', text: 'ha' },
        }),
      ],
    });
    const error = await failure(run());
    expect(error.message).toBe('anthropic: the reply stream ended before it was complete');
    expect(error.retryable).toBe(true);
  });

  it('uses the request base URL over the configured one', async () => {
    const other = new AnthropicMessagesProvider({ baseUrl: 'http://127.0.0.1:9/nowhere' });
    fake.enqueue({ chunks: ['ok'] });
    const events = await collect(
      other.stream(request({ baseUrl: `${fake.url}/` }), new AbortController().signal),
    );
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'stop' });
    expect(fake.requests[0]?.path).toBe('/v1/messages');
  });

  it('refuses a reply line longer than the bound', async () => {
    fake.enqueue({ rawEvents: [`data: "${'x'.repeat(1024 * 1024 + 10)}"`] });
    const error = await failure(run());
    expect(error.message).toContain('reply line longer than');
  });
});
