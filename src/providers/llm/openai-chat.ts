import { ParlaError } from '../../core/errors.js';
import { ProviderError } from '../provider-error.js';
import { streamVendorLines } from '../vendor-stream.js';
import type {
  ModelEvent,
  ModelMessage,
  ModelProvider,
  ModelRequest,
  ModelToolCall,
} from './model-provider.js';

export interface OpenAiChatOptions {
  /** The `model.provider` value served: `openai`, or `custom-llm` for any compatible server. */
  name: string;
  /** Used when the request names no base URL, e.g. `https://api.openai.com/v1`. */
  baseUrl?: string;
  /** How long to wait for the first byte of the reply body before giving up. */
  firstByteTimeoutMs?: number;
}

const DEFAULT_FIRST_BYTE_TIMEOUT_MS = 30_000;
const SSE_FIELDS = new Set(['data', 'event', 'id', 'retry']);

/** Speaks the OpenAI Chat Completions protocol: one streamed POST to `{baseUrl}/chat/completions`. */
export class OpenAiChatProvider implements ModelProvider {
  readonly name: string;
  readonly #baseUrl: string | undefined;
  readonly #firstByteTimeoutMs: number;

  constructor(options: OpenAiChatOptions) {
    this.name = options.name;
    this.#baseUrl = options.baseUrl;
    this.#firstByteTimeoutMs = options.firstByteTimeoutMs ?? DEFAULT_FIRST_BYTE_TIMEOUT_MS;
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelEvent> {
    const baseUrl = request.baseUrl ?? this.#baseUrl;
    if (baseUrl === undefined || baseUrl === '') {
      throw new ParlaError('ERR_BAD_REQUEST', `${this.name}: no base URL to send the request to`);
    }
    const assembler = new ChunkAssembler(this.name, 200);
    const lines = streamVendorLines(
      {
        provider: this.name,
        url: `${baseUrl.replace(/\/+$/, '')}/chat/completions`,
        headers: {
          'content-type': 'application/json',
          accept: 'text/event-stream',
          ...(request.apiKey === null ? {} : { authorization: `Bearer ${request.apiKey}` }),
        },
        body: wireBody(request),
        firstByteTimeoutMs: this.#firstByteTimeoutMs,
        acceptJsonReply: true,
      },
      signal,
    );
    for await (const chunk of lines) {
      if ('json' in chunk) {
        // A compatible server that ignored `stream: true` and answered in one piece.
        yield* assembler.completion(chunk.json);
        return;
      }
      yield* assembler.line(chunk.line);
      if (assembler.finished) {
        return;
      }
    }
    yield* assembler.end();
  }
}

function wireBody(request: ModelRequest): Record<string, unknown> {
  return {
    model: request.model,
    messages: request.messages.map(wireMessage),
    stream: true,
    stream_options: { include_usage: true },
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.maxTokens === undefined ? {} : { max_tokens: request.maxTokens }),
    ...(request.tools === undefined || request.tools.length === 0
      ? {}
      : {
          tools: request.tools.map((tool) => ({
            type: 'function',
            function: {
              name: tool.name,
              ...(tool.description === undefined ? {} : { description: tool.description }),
              ...(tool.parameters === undefined ? {} : { parameters: tool.parameters }),
            },
          })),
        }),
  };
}

function wireMessage(message: ModelMessage): Record<string, unknown> {
  return {
    role: message.role,
    content: message.content,
    ...(message.toolCalls === undefined || message.toolCalls.length === 0
      ? {}
      : {
          tool_calls: message.toolCalls.map((call) => ({
            id: call.id,
            type: 'function',
            function: { name: call.name, arguments: call.arguments },
          })),
        }),
    ...(message.toolCallId === undefined ? {} : { tool_call_id: message.toolCallId }),
  };
}

interface WireToolCallDelta {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

interface WireChunk {
  error?: { message?: string } | string;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
  choices?: {
    delta?: { content?: string | null; tool_calls?: WireToolCallDelta[] };
    message?: { content?: string | null; tool_calls?: WireToolCallDelta[] };
    finish_reason?: string | null;
  }[];
}

/** Turns the lines of a chat-completions event stream into ModelEvents. */
class ChunkAssembler {
  finished = false;
  readonly #provider: string;
  readonly #status: number;
  /** Tool calls arrive in pieces, keyed by their `index`. */
  readonly #calls = new Map<number, ModelToolCall>();
  #finishReason: string | null = null;

  constructor(provider: string, status: number) {
    this.#provider = provider;
    this.#status = status;
  }

  *line(line: string): Generator<ModelEvent> {
    if (line === '' || line.startsWith(':') || this.finished) {
      return;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    if (colon === -1 && !SSE_FIELDS.has(field)) {
      throw this.#malformed(line);
    }
    if (field !== 'data' || colon === -1) {
      return;
    }
    const data = line.slice(colon + 1).trim();
    if (data === '[DONE]') {
      yield* this.#finish();
      return;
    }
    let chunk: WireChunk;
    try {
      chunk = JSON.parse(data) as WireChunk;
    } catch {
      throw this.#malformed(line);
    }
    if (chunk === null || typeof chunk !== 'object') {
      throw this.#malformed(line);
    }
    yield* this.#chunk(chunk);
  }

  /** The body ended: fine after a finish reason, a truncated reply otherwise. */
  *end(): Generator<ModelEvent> {
    if (this.finished) {
      return;
    }
    if (this.#finishReason === null) {
      throw new ProviderError(
        this.#provider,
        'the reply stream ended before it was complete',
        null,
      );
    }
    yield* this.#finish();
  }

  /** A whole (non-streamed) chat completion. */
  *completion(text: string): Generator<ModelEvent> {
    let body: WireChunk;
    try {
      body = JSON.parse(text) as WireChunk;
    } catch {
      throw this.#malformed(text);
    }
    const choice = body.choices?.[0];
    const message = choice?.message;
    yield* this.#chunk({
      ...(body.usage === undefined ? {} : { usage: body.usage }),
      choices: [
        {
          delta: {
            content: message?.content ?? null,
            tool_calls: (message?.tool_calls ?? []).map((call, index) => ({ ...call, index })),
          },
          finish_reason: choice?.finish_reason ?? 'stop',
        },
      ],
    });
    yield* this.#finish();
  }

  *#chunk(chunk: WireChunk): Generator<ModelEvent> {
    if (chunk.error !== undefined) {
      const message = typeof chunk.error === 'string' ? chunk.error : chunk.error.message;
      throw new ProviderError(this.#provider, `stream error: ${message ?? 'unknown'}`, null);
    }
    const choice = chunk.choices?.[0];
    const content = choice?.delta?.content;
    if (typeof content === 'string' && content !== '') {
      yield { type: 'text', delta: content };
    }
    for (const piece of choice?.delta?.tool_calls ?? []) {
      const index = piece.index ?? 0;
      const call = this.#calls.get(index) ?? { id: '', name: '', arguments: '' };
      call.id = piece.id ?? call.id;
      call.name += piece.function?.name ?? '';
      call.arguments += piece.function?.arguments ?? '';
      this.#calls.set(index, call);
    }
    if (typeof choice?.finish_reason === 'string') {
      this.#finishReason = choice.finish_reason;
      yield* this.#flushCalls();
    }
    const usage = chunk.usage;
    if (usage !== undefined && usage !== null) {
      yield {
        type: 'usage',
        promptTokens: usage.prompt_tokens ?? 0,
        completionTokens: usage.completion_tokens ?? 0,
      };
    }
  }

  *#flushCalls(): Generator<ModelEvent> {
    const indexes = [...this.#calls.keys()].sort((a, b) => a - b);
    for (const index of indexes) {
      const call = this.#calls.get(index);
      if (call !== undefined) {
        yield { type: 'tool-call', call };
      }
    }
    this.#calls.clear();
  }

  *#finish(): Generator<ModelEvent> {
    yield* this.#flushCalls();
    this.finished = true;
    yield { type: 'done', finishReason: this.#finishReason ?? 'stop' };
  }

  #malformed(line: string): ProviderError {
    const shown = line.length > 120 ? `${line.slice(0, 120)}…` : line;
    // The HTTP status was fine (2xx): a reply the vendor cannot parse will not get better on retry.
    return new ProviderError(
      this.#provider,
      `malformed line in the reply stream: ${JSON.stringify(shown)}`,
      this.#status,
    );
  }
}
