import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ModelEvent, ModelRequest } from '../../../src/providers/llm/model-provider.js';
import { OpenAiChatProvider } from '../../../src/providers/llm/openai-chat.js';
import { createModelRegistry } from '../../../src/providers/llm/registry.js';
import { ProviderError } from '../../../src/providers/provider-error.js';
import { FakeOpenAiServer } from '../../support/fake-openai-server.js';

const fake = new FakeOpenAiServer();
let provider: OpenAiChatProvider;

beforeAll(async () => {
  await fake.start();
  provider = new OpenAiChatProvider({ name: 'openai', baseUrl: fake.url, firstByteTimeoutMs: 500 });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

function request(extra: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ],
    apiKey: 'sk-test',
    ...extra,
  };
}

async function collect(
  events: AsyncIterable<ModelEvent>,
  signal?: AbortSignal,
): Promise<ModelEvent[]> {
  const out: ModelEvent[] = [];
  for await (const event of events) {
    out.push(event);
  }
  signal?.throwIfAborted();
  return out;
}

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}

describe('OpenAiChatProvider', () => {
  it('streams text deltas, usage and done, sending the OpenAI wire request', async () => {
    fake.enqueue({ chunks: ['Hel', 'lo', '!'], usage: { prompt_tokens: 9, completion_tokens: 3 } });
    const events = await collect(
      provider.stream(request({ temperature: 0.2, maxTokens: 50 }), new AbortController().signal),
    );
    expect(events).toEqual([
      { type: 'text', delta: 'Hel' },
      { type: 'text', delta: 'lo' },
      { type: 'text', delta: '!' },
      { type: 'usage', promptTokens: 9, completionTokens: 3 },
      { type: 'done', finishReason: 'stop' },
    ]);
    const sent = fake.requests[0];
    expect(sent?.path).toBe('/v1/chat/completions');
    expect(sent?.headers.authorization).toBe('Bearer sk-test');
    expect(fake.sentBody(0)).toEqual({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
      stream: true,
      stream_options: { include_usage: true },
      temperature: 0.2,
      max_tokens: 50,
    });
  });

  it('assembles tool calls from argument pieces spread over deltas, by index', async () => {
    fake.enqueue({
      chunks: ['Let me check.'],
      toolCalls: [
        { id: 'call_a', name: 'lookup', argumentChunks: ['{"ci', 'ty":"Pa', 'ris"}'] },
        { id: 'call_b', name: 'weather', argumentChunks: ['{}'] },
      ],
    });
    const events = await collect(
      provider.stream(
        request({ tools: [{ name: 'lookup', parameters: { type: 'object' } }] }),
        new AbortController().signal,
      ),
    );
    expect(events.filter((e) => e.type === 'tool-call')).toEqual([
      { type: 'tool-call', call: { id: 'call_a', name: 'lookup', arguments: '{"city":"Paris"}' } },
      { type: 'tool-call', call: { id: 'call_b', name: 'weather', arguments: '{}' } },
    ]);
    expect(events.at(-1)).toEqual({ type: 'done', finishReason: 'tool_calls' });
    expect(fake.sentBody(0).tools).toEqual([
      { type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } },
    ]);
  });

  it('sends tool-call history in the wire format and no Authorization without a key', async () => {
    fake.enqueue({ chunks: ['ok'], usage: null });
    const events = await collect(
      provider.stream(
        request({
          apiKey: null,
          messages: [
            {
              role: 'assistant',
              content: null,
              toolCalls: [{ id: 'c1', name: 'f', arguments: '{}' }],
            },
            { role: 'tool', content: '42', toolCallId: 'c1' },
          ],
        }),
        new AbortController().signal,
      ),
    );
    expect(events.some((e) => e.type === 'usage')).toBe(false);
    const sent = fake.requests[0];
    expect(sent?.headers.authorization).toBeUndefined();
    expect(fake.sentBody(0).messages).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', content: '42', tool_call_id: 'c1' },
    ]);
  });

  it.each([
    [401, false],
    [429, true],
    [500, true],
  ])(
    'maps HTTP %i to ProviderError with the vendor status (retryable %s)',
    async (status, retry) => {
      fake.enqueue({ status, errorMessage: `vendor says ${status}` });
      const error = await failure(
        collect(provider.stream(request(), new AbortController().signal)),
      );
      expect(error.vendorStatus).toBe(status);
      expect(error.retryable).toBe(retry);
      expect(error.code).toBe('ERR_PROVIDER');
      expect(error.message).toBe(`openai: HTTP ${status}: vendor says ${status}`);
    },
  );

  it('cancels the vendor request when the signal aborts', async () => {
    fake.enqueue({ chunks: ['a', 'b', 'c', 'd', 'e'], chunkDelayMs: 200 });
    const controller = new AbortController();
    const seen: ModelEvent[] = [];
    const run = (async () => {
      for await (const event of provider.stream(request(), controller.signal)) {
        seen.push(event);
        if (event.type === 'text') {
          controller.abort(new Error('caller gave up'));
        }
      }
    })();
    await expect(run).rejects.toThrow('caller gave up');
    expect(seen).toEqual([{ type: 'text', delta: 'a' }]);
    await vi.waitFor(() => expect(fake.requests[0]?.aborted).toBe(true));
  });

  it('gives up with a timeout error when the first byte is late', async () => {
    fake.enqueue({ chunks: ['late'], delayMs: 2000 });
    const error = await failure(collect(provider.stream(request(), new AbortController().signal)));
    expect(error.code).toBe('ERR_PROVIDER_TIMEOUT');
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('no reply within 500 ms');
    await vi.waitFor(() => expect(fake.requests[0]?.aborted).toBe(true));
  });

  it('reports a malformed SSE data line clearly, as not retryable', async () => {
    fake.enqueue({ rawLines: ['data: {"choices":[{"delta":{"content":"x"}}]}', 'data: {oops'] });
    const error = await failure(collect(provider.stream(request(), new AbortController().signal)));
    expect(error.message).toBe('openai: malformed line in the reply stream: "data: {oops"');
    expect(error.retryable).toBe(false);
  });

  it('rejects a body that is not an event stream at all', async () => {
    fake.enqueue({ rawLines: ['<html>oops</html>'] });
    const error = await failure(collect(provider.stream(request(), new AbortController().signal)));
    expect(error.message).toContain('malformed line in the reply stream');
  });

  it('treats a stream cut off before any finish reason as a failure', async () => {
    fake.enqueue({ rawLines: ['data: {"choices":[{"delta":{"content":"half"}}]}'] });
    const error = await failure(collect(provider.stream(request(), new AbortController().signal)));
    expect(error.message).toBe('openai: the reply stream ended before it was complete');
  });

  it('accepts a whole JSON completion from a server that does not stream', async () => {
    fake.enqueue({
      json: {
        choices: [
          {
            message: {
              content: 'At once',
              tool_calls: [{ id: 'c9', function: { name: 'f', arguments: '{"a":1}' } }],
            },
            finish_reason: 'tool_calls',
          },
        ],
        usage: { prompt_tokens: 4, completion_tokens: 2 },
      },
    });
    const events = await collect(provider.stream(request(), new AbortController().signal));
    expect(events).toEqual([
      { type: 'text', delta: 'At once' },
      { type: 'tool-call', call: { id: 'c9', name: 'f', arguments: '{"a":1}' } },
      { type: 'usage', promptTokens: 4, completionTokens: 2 },
      { type: 'done', finishReason: 'tool_calls' },
    ]);
  });

  it('maps an unreachable server to a retryable ProviderError', async () => {
    const dead = new OpenAiChatProvider({ name: 'custom-llm', firstByteTimeoutMs: 2000 });
    const error = await failure(
      collect(
        dead.stream(request({ baseUrl: 'http://127.0.0.1:9/v1' }), new AbortController().signal),
      ),
    );
    expect(error.vendorStatus).toBeNull();
    expect(error.retryable).toBe(true);
    expect(error.message).toMatch(/^custom-llm: request failed/);
  });
});

describe('createModelRegistry', () => {
  it('serves openai with the configured defaults and custom-llm with none', async () => {
    const registry = createModelRegistry({ openaiBaseUrl: fake.url, openaiApiKey: 'cfg-key' });
    expect(registry.defaults('openai')).toEqual({ baseUrl: fake.url, apiKey: 'cfg-key' });
    expect(registry.defaults('custom-llm')).toEqual({});
    expect(registry.get('anthropic')?.name).toBe('anthropic');
    expect(registry.get('no-such-vendor')).toBeUndefined();
    expect(
      createModelRegistry({ openaiBaseUrl: fake.url, openaiApiKey: '' }).defaults('openai'),
    ).toEqual({ baseUrl: fake.url });
    const events = await collect(
      registry
        .get('custom-llm')!
        .stream(request({ baseUrl: fake.url }), new AbortController().signal),
    );
    expect(
      events
        .filter((e) => e.type === 'text')
        .map((e) => (e as { delta: string }).delta)
        .join(''),
    ).toBe('You said: Hi');
  });
});
