import { ParlaError } from '../../core/errors.js';
import { ProviderError } from '../provider-error.js';
import { streamVendorLines } from '../vendor-stream.js';
import type { ModelEvent, ModelMessage, ModelProvider, ModelRequest } from './model-provider.js';

const DEFAULT_FIRST_BYTE_TIMEOUT_MS = 30_000;
/** The Messages API requires `max_tokens`; used when the assistant sets none. */
const DEFAULT_MAX_TOKENS = 4096;
export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com/v1';
export const ANTHROPIC_VERSION = '2023-06-01';
const SSE_FIELDS = new Set(['data', 'event', 'id', 'retry']);

/** Anthropic stop reasons in the OpenAI spelling the rest of the server uses. */
const FINISH_REASONS: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
};

/** The HTTP status an in-stream `error` event stands for, so it maps like an HTTP failure. */
const ERROR_TYPE_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

export interface AnthropicMessagesOptions {
  /** The `model.provider` value served; `anthropic` by default. */
  name?: string;
  /** Used when the request names no base URL; https://api.anthropic.com/v1 by default. */
  baseUrl?: string;
  /** How long to wait for the first byte of the reply body before giving up. */
  firstByteTimeoutMs?: number;
}

/** Speaks the Anthropic Messages protocol: one streamed POST to `{baseUrl}/messages`. */
export class AnthropicMessagesProvider implements ModelProvider {
  readonly name: string;
  readonly #baseUrl: string;
  readonly #firstByteTimeoutMs: number;

  constructor(options: AnthropicMessagesOptions = {}) {
    this.name = options.name ?? 'anthropic';
    this.#baseUrl = options.baseUrl ?? ANTHROPIC_DEFAULT_BASE_URL;
    this.#firstByteTimeoutMs = options.firstByteTimeoutMs ?? DEFAULT_FIRST_BYTE_TIMEOUT_MS;
  }

  async *stream(request: ModelRequest, signal: AbortSignal): AsyncGenerator<ModelEvent> {
    const baseUrl = request.baseUrl ?? this.#baseUrl;
    if (baseUrl === '') {
      throw new ParlaError('ERR_BAD_REQUEST', `${this.name}: no base URL to send the request to`);
    }
    const assembler = new EventAssembler(this.name, 200);
    const lines = streamVendorLines(
      {
        provider: this.name,
        url: `${baseUrl.replace(/\/+$/, '')}/messages`,
        headers: {
          'content-type': 'application/json',
          accept: 'text/event-stream',
          'anthropic-version': ANTHROPIC_VERSION,
          ...(request.apiKey === null ? {} : { 'x-api-key': request.apiKey }),
        },
        body: wireBody(request),
        firstByteTimeoutMs: this.#firstByteTimeoutMs,
      },
      signal,
    );
    for await (const chunk of lines) {
      if ('line' in chunk) {
        yield* assembler.line(chunk.line);
        if (assembler.finished) {
          return;
        }
      }
    }
    if (!assembler.finished) {
      throw new ProviderError(this.name, 'the reply stream ended before it was complete', null);
    }
  }
}

type WireBlock = Record<string, unknown> & { type: string };
interface WireMessage {
  role: 'user' | 'assistant';
  content: WireBlock[];
}

/**
 * The Messages request: system messages become the top-level `system`, tool results become
 * user `tool_result` blocks, assistant tool calls `tool_use` blocks; consecutive messages of one
 * role are merged (the API wants user and assistant turns to alternate).
 */
export function wireBody(request: ModelRequest): Record<string, unknown> {
  const system = request.messages
    .filter((m) => m.role === 'system' && m.content !== null && m.content !== '')
    .map((m) => m.content)
    .join('\n\n');
  const messages: WireMessage[] = [];
  for (const message of request.messages) {
    if (message.role === 'system') {
      continue;
    }
    const wire = wireMessage(message);
    const last = messages.at(-1);
    if (last !== undefined && last.role === wire.role) {
      last.content.push(...wire.content);
    } else if (wire.content.length > 0) {
      messages.push(wire);
    }
  }
  return {
    model: request.model,
    max_tokens: request.maxTokens ?? DEFAULT_MAX_TOKENS,
    ...(system === '' ? {} : { system }),
    messages: messages.map((m) => {
      const only = m.content.length === 1 ? m.content[0] : undefined;
      return only?.type === 'text' ? { role: m.role, content: only.text } : m;
    }),
    stream: true,
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.tools === undefined || request.tools.length === 0
      ? {}
      : {
          tools: request.tools.map((tool) => ({
            name: tool.name,
            ...(tool.description === undefined ? {} : { description: tool.description }),
            input_schema: tool.parameters ?? { type: 'object', properties: {} },
          })),
        }),
  };
}

function wireMessage(message: ModelMessage): WireMessage {
  const text: WireBlock[] =
    message.content === null || message.content === ''
      ? []
      : [{ type: 'text', text: message.content }];
  if (message.role === 'tool') {
    return {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: message.toolCallId ?? '',
          content: message.content ?? '',
        },
      ],
    };
  }
  if (message.role === 'assistant') {
    const calls = (message.toolCalls ?? []).map((call) => ({
      type: 'tool_use',
      id: call.id,
      name: call.name,
      input: parseInput(call.arguments),
    }));
    return { role: 'assistant', content: [...text, ...calls] };
  }
  return { role: 'user', content: text };
}

/** Tool arguments are JSON text; the API wants an object (a broken one becomes `{}`). */
function parseInput(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text === '' ? '{}' : text);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

interface WireEvent {
  type?: unknown;
  index?: number;
  message?: { usage?: WireUsage };
  content_block?: { type?: string; id?: string; name?: string; text?: string };
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string | null };
  usage?: WireUsage;
  error?: { type?: string; message?: string };
}

interface WireUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/** Turns the lines of a Messages event stream into ModelEvents. */
class EventAssembler {
  finished = false;
  readonly #provider: string;
  readonly #status: number;
  /** Tool-use blocks being assembled, keyed by content block index. */
  readonly #calls = new Map<number, { id: string; name: string; arguments: string }>();
  #promptTokens = 0;
  #completionTokens = 0;
  #sawUsage = false;
  #stopReason: string | null = null;

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
    // Every data payload carries its own `type`, so the `event:` lines add nothing.
    if (field !== 'data' || colon === -1) {
      return;
    }
    let event: WireEvent;
    try {
      event = JSON.parse(line.slice(colon + 1).trim()) as WireEvent;
    } catch {
      throw this.#malformed(line);
    }
    if (event === null || typeof event !== 'object' || typeof event.type !== 'string') {
      throw this.#malformed(line);
    }
    yield* this.#event(event, event.type);
  }

  *#event(event: WireEvent, type: string): Generator<ModelEvent> {
    const index = event.index ?? 0;
    switch (type) {
      case 'message_start':
        this.#usage(event.message?.usage);
        return;
      case 'content_block_start': {
        const block = event.content_block;
        if (block?.type === 'tool_use') {
          this.#calls.set(index, { id: block.id ?? '', name: block.name ?? '', arguments: '' });
        } else if (block?.type === 'text' && typeof block.text === 'string' && block.text !== '') {
          yield { type: 'text', delta: block.text };
        }
        return;
      }
      case 'content_block_delta': {
        const delta = event.delta;
        if (delta?.type === 'text_delta' && typeof delta.text === 'string' && delta.text !== '') {
          yield { type: 'text', delta: delta.text };
        } else if (delta?.type === 'input_json_delta') {
          const call = this.#calls.get(index);
          if (call !== undefined) {
            call.arguments += delta.partial_json ?? '';
          }
        }
        return;
      }
      case 'content_block_stop': {
        const call = this.#calls.get(index);
        if (call !== undefined) {
          this.#calls.delete(index);
          yield {
            type: 'tool-call',
            call: { ...call, arguments: call.arguments === '' ? '{}' : call.arguments },
          };
        }
        return;
      }
      case 'message_delta':
        this.#stopReason = event.delta?.stop_reason ?? this.#stopReason;
        this.#usage(event.usage);
        return;
      case 'message_stop':
        if (this.#sawUsage) {
          yield {
            type: 'usage',
            promptTokens: this.#promptTokens,
            completionTokens: this.#completionTokens,
          };
        }
        this.finished = true;
        yield {
          type: 'done',
          finishReason:
            this.#stopReason === null
              ? 'stop'
              : (FINISH_REASONS[this.#stopReason] ?? this.#stopReason),
        };
        return;
      case 'error': {
        const errorType = event.error?.type ?? 'unknown';
        throw new ProviderError(
          this.#provider,
          `stream error: ${errorType}: ${event.error?.message ?? 'unknown'}`,
          ERROR_TYPE_STATUS[errorType] ?? null,
        );
      }
      default:
        // `ping` and event types added later are skipped, as the API asks clients to.
        return;
    }
  }

  #usage(usage: WireUsage | undefined): void {
    if (usage === undefined) {
      return;
    }
    this.#sawUsage = true;
    if (typeof usage.input_tokens === 'number') {
      this.#promptTokens =
        usage.input_tokens +
        (usage.cache_creation_input_tokens ?? 0) +
        (usage.cache_read_input_tokens ?? 0);
    }
    if (typeof usage.output_tokens === 'number') {
      this.#completionTokens = usage.output_tokens;
    }
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
