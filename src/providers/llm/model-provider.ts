/** The language-model side of a conversation, shared by chats and (later) the voice pipeline. */

export interface ModelToolCall {
  id: string;
  name: string;
  /** JSON text, as the vendor sent it. */
  arguments: string;
}

export interface ModelMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string | null;
  toolCalls?: ModelToolCall[];
  toolCallId?: string;
}

export interface ModelTool {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

export interface ModelRequest {
  model: string;
  messages: ModelMessage[];
  tools?: ModelTool[];
  temperature?: number;
  maxTokens?: number;
  /** The vendor key (from the assistant's credentials, the org's credentials or the server config). */
  apiKey: string | null;
  /** Overrides the vendor's base URL (custom-llm, tests). */
  baseUrl?: string;
}

/**
 * What a reply stream yields: text as it arrives, each tool call once it is complete (its
 * argument pieces joined), token usage when the vendor reports it, and `done` last.
 */
export type ModelEvent =
  | { type: 'text'; delta: string }
  | { type: 'tool-call'; call: ModelToolCall }
  | { type: 'usage'; promptTokens: number; completionTokens: number }
  | { type: 'done'; finishReason: string };

export interface ModelProvider {
  /** The `model.provider` value this adapter serves, e.g. `openai`. */
  readonly name: string;
  /**
   * Streams the reply; aborting `signal` cancels the vendor request and the stream then throws
   * the signal's reason. Vendor failures throw ProviderError.
   */
  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelEvent>;
}

export interface ModelProviderRegistry {
  get(provider: string): ModelProvider | undefined;
  /** Default base URL and key per provider, from the server config. */
  defaults(provider: string): { baseUrl?: string; apiKey?: string };
}
