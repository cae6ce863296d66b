import { ParlaError } from '../../core/errors.js';
import { ProviderError } from '../provider-error.js';
import type {
  ModelEvent,
  ModelMessage,
  ModelProvider,
  ModelRequest,
  ModelToolCall,
} from './model-provider.js';

/** Bounds on what a vendor (or a custom-llm URL chosen by a tenant) can make us hold. */
const MAX_LINE_CHARS = 1024 * 1024;
const MAX_REPLY_CHARS = 16 * 1024 * 1024;
const MAX_ERROR_BODY_CHARS = 64 * 1024;

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
    signal.throwIfAborted();
    // One controller for the fetch: the caller's signal and the first-byte timer both abort it.
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.#firstByteTimeoutMs);
    const fail = (error: unknown): unknown => this.#failure(error, signal, timedOut);
    try {
      let response: Response;
      try {
        response = await fetch(`${baseUrl.replace(/\/+$/, '')}/chat/completions`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'text/event-stream',
            ...(request.apiKey === null ? {} : { authorization: `Bearer ${request.apiKey}` }),
          },
          body: JSON.stringify(wireBody(request)),
          signal: controller.signal,
        });
      } catch (error) {
        throw fail(error);
      }
      if (!response.ok || response.body === null) {
        throw await this.#httpError(response).catch(fail);
      }
      const assembler = new ChunkAssembler(this.name, response.status);
      if (response.headers.get('content-type')?.includes('application/json') === true) {
        // A compatible server that ignored `stream: true` and answered in one piece.
        let text: string;
        try {
          text = await readLimited(response, MAX_REPLY_CHARS);
        } catch (error) {
          throw fail(error);
        }
        clearTimeout(timer);
        yield* assembler.completion(text);
        return;
      }
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffered = '';
      let receivedChars = 0;
      for (;;) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (error) {
          throw fail(error);
        }
        clearTimeout(timer);
        if (chunk.done) {
          break;
        }
        receivedChars += chunk.value.length;
        if (receivedChars > MAX_REPLY_CHARS) {
          throw new ProviderError(
            this.name,
            `reply longer than ${MAX_REPLY_CHARS} characters`,
            null,
          );
        }
        // Only the new text is searched for line ends, so a long line costs linear time.
        let text = chunk.value;
        let newline = text.indexOf('\n');
        while (newline !== -1) {
          const line = (buffered + text.slice(0, newline)).replace(/\r$/, '');
          buffered = '';
          text = text.slice(newline + 1);
          yield* assembler.line(line);
          if (assembler.finished) {
            return;
          }
          newline = text.indexOf('\n');
        }
        buffered += text;
        if (buffered.length > MAX_LINE_CHARS) {
          throw new ProviderError(
            this.name,
            `reply line longer than ${MAX_LINE_CHARS} characters`,
            null,
          );
        }
      }
      yield* assembler.line(buffered.replace(/\r$/, ''));
      yield* assembler.end();
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      // Releases the connection when the consumer stopped reading early.
      controller.abort();
    }
  }

  #failure(error: unknown, signal: AbortSignal, timedOut: boolean): unknown {
    if (signal.aborted) {
      return signal.reason ?? error;
    }
    if (timedOut) {
      return new ProviderError(this.name, `no reply within ${this.#firstByteTimeoutMs} ms`, null, {
        cause: error,
        timeout: true,
      });
    }
    if (error instanceof ParlaError) {
      return error;
    }
    const reason = (error as { cause?: { message?: unknown } }).cause?.message;
    const message = error instanceof Error ? error.message : String(error);
    return new ProviderError(
      this.name,
      `request failed: ${message}${typeof reason === 'string' ? ` (${reason})` : ''}`,
      null,
      { cause: error },
    );
  }

  async #httpError(response: Response): Promise<ProviderError> {
    const text = await readLimited(response, MAX_ERROR_BODY_CHARS);
    let message = text.slice(0, 300);
    try {
      const parsed = JSON.parse(text) as { error?: { message?: unknown } | string };
      const vendor = typeof parsed.error === 'string' ? parsed.error : parsed.error?.message;
      if (typeof vendor === 'string') {
        message = vendor;
      }
    } catch {
      // Not JSON: keep the start of the body as the message.
    }
    return new ProviderError(
      this.name,
      `HTTP ${response.status}${message === '' ? '' : `: ${message}`}`,
      response.status,
    );
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

/** Reads at most `limit` characters of a body, then stops reading (the rest is discarded). */
async function readLimited(response: Response, limit: number): Promise<string> {
  if (response.body === null) {
    return '';
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        return text;
      }
      text += value;
      if (text.length > limit) {
        throw new Error(`body longer than ${limit} characters`);
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
