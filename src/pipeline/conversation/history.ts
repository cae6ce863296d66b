import type { ModelMessage, ModelRequest } from '../../providers/llm/model-provider.js';
import { substituteVariables, type PipelineModelConfig } from './options.js';

/**
 * The conversation as the model sees it: the system prompt (with `{{var}}` substituted from
 * variableValues), the configured start of the conversation (model.messages), then the user and
 * assistant messages so far.
 */
export class ConversationHistory {
  readonly #config: PipelineModelConfig;
  readonly #system: ModelMessage[];
  readonly #messages: ModelMessage[] = [];

  constructor(config: PipelineModelConfig, variableValues?: Readonly<Record<string, unknown>>) {
    this.#config = config;
    const prompt = substituteVariables(config.systemPrompt ?? '', variableValues);
    this.#system = prompt === '' ? [] : [{ role: 'system', content: prompt }];
    for (const message of config.messages ?? []) {
      const content =
        message.content === null ? null : substituteVariables(message.content, variableValues);
      this.addMessage({ ...message, content });
    }
  }

  /** A copy of the whole conversation, system prompt first. */
  messages(): ModelMessage[] {
    return [...this.#system, ...this.#messages].map((message) => ({ ...message }));
  }

  add(role: 'user' | 'assistant', content: string): void {
    this.#messages.push({ role, content });
  }

  /** Any message (a copy is kept): added by the owner, or a tool round. */
  addMessage(message: ModelMessage): void {
    this.#messages.push({
      ...message,
      ...(message.toolCalls === undefined
        ? {}
        : { toolCalls: message.toolCalls.map((call) => ({ ...call })) }),
    });
  }

  /** Removes the last message if it is the user's `content` (its reply was abandoned). */
  takeBackUser(content: string): boolean {
    const last = this.#messages[this.#messages.length - 1];
    if (last?.role !== 'user' || last.content !== content) {
      return false;
    }
    this.#messages.pop();
    return true;
  }

  /** The model request for the next reply. */
  request(): ModelRequest {
    const config = this.#config;
    return {
      model: config.model,
      messages: this.messages(),
      apiKey: config.apiKey,
      ...(config.tools === undefined ? {} : { tools: config.tools }),
      ...(config.temperature === undefined ? {} : { temperature: config.temperature }),
      ...(config.maxTokens === undefined ? {} : { maxTokens: config.maxTokens }),
      ...(config.baseUrl === undefined ? {} : { baseUrl: config.baseUrl }),
    };
  }
}
