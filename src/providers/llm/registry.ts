import type { Config } from '../../config/schema.js';
import type { ModelProvider, ModelProviderRegistry } from './model-provider.js';
import { OpenAiChatProvider } from './openai-chat.js';

export type ModelRegistryConfig = Pick<Config, 'openaiBaseUrl' | 'openaiApiKey'> & {
  /** First-byte timeout of every adapter; 30 s when absent. */
  firstByteTimeoutMs?: number;
};

/**
 * The model adapters this server has: `openai` (default base URL and key from the config) and
 * `custom-llm` (any OpenAI-compatible server at the assistant's `model.url`, no default key).
 */
export function createModelRegistry(config: ModelRegistryConfig): ModelProviderRegistry {
  const timeout =
    config.firstByteTimeoutMs === undefined
      ? {}
      : { firstByteTimeoutMs: config.firstByteTimeoutMs };
  const providers = new Map<string, ModelProvider>([
    [
      'openai',
      new OpenAiChatProvider({ name: 'openai', baseUrl: config.openaiBaseUrl, ...timeout }),
    ],
    ['custom-llm', new OpenAiChatProvider({ name: 'custom-llm', ...timeout })],
  ]);
  return {
    get: (provider) => providers.get(provider),
    defaults: (provider) => {
      if (provider !== 'openai') {
        return {};
      }
      return {
        baseUrl: config.openaiBaseUrl,
        ...(config.openaiApiKey === '' ? {} : { apiKey: config.openaiApiKey }),
      };
    },
  };
}
