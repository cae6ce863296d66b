import type { Config } from '../../config/schema.js';
import { ANTHROPIC_DEFAULT_BASE_URL, AnthropicMessagesProvider } from './anthropic-messages.js';
import type { ModelProvider, ModelProviderRegistry } from './model-provider.js';
import { OpenAiChatProvider } from './openai-chat.js';

export type ModelRegistryConfig = Pick<Config, 'openaiBaseUrl' | 'openaiApiKey'> & {
  /** Anthropic's base URL; https://api.anthropic.com/v1 when absent or empty. */
  anthropicBaseUrl?: string;
  /** The server's default Anthropic key; none when absent or empty. */
  anthropicApiKey?: string;
  /** First-byte timeout of every adapter; 30 s when absent. */
  firstByteTimeoutMs?: number;
};

/** What a stored credential may carry for a model vendor. */
export interface ModelCredential {
  apiKey?: string;
  /** A credential-level base URL (a proxy or gateway in front of the vendor). */
  baseUrl?: string;
}

/**
 * The model adapters this server has: `openai` and `anthropic` (default base URL and key from
 * the config) and `custom-llm` (any OpenAI-compatible server at the assistant's `model.url`, no
 * default key).
 */
export function createModelRegistry(config: ModelRegistryConfig): ModelProviderRegistry {
  const timeout =
    config.firstByteTimeoutMs === undefined
      ? {}
      : { firstByteTimeoutMs: config.firstByteTimeoutMs };
  const anthropicBaseUrl =
    config.anthropicBaseUrl === undefined || config.anthropicBaseUrl === ''
      ? ANTHROPIC_DEFAULT_BASE_URL
      : config.anthropicBaseUrl;
  const providers = new Map<string, ModelProvider>([
    [
      'openai',
      new OpenAiChatProvider({ name: 'openai', baseUrl: config.openaiBaseUrl, ...timeout }),
    ],
    [
      'anthropic',
      new AnthropicMessagesProvider({ name: 'anthropic', baseUrl: anthropicBaseUrl, ...timeout }),
    ],
    ['custom-llm', new OpenAiChatProvider({ name: 'custom-llm', ...timeout })],
  ]);
  const keyOf = (key: string | undefined): { apiKey?: string } =>
    key === undefined || key === '' ? {} : { apiKey: key };
  return {
    get: (provider) => providers.get(provider),
    defaults: (provider) => {
      switch (provider) {
        case 'openai':
          return { baseUrl: config.openaiBaseUrl, ...keyOf(config.openaiApiKey) };
        case 'anthropic':
          return { baseUrl: anthropicBaseUrl, ...keyOf(config.anthropicApiKey) };
        default:
          return {};
      }
    },
  };
}

/**
 * Where a request for `provider` goes and with which key: a credential's non-empty `baseUrl`
 * and `apiKey` win over the registry's defaults for that provider.
 */
export function resolveModelEndpoint(
  registry: ModelProviderRegistry,
  provider: string,
  credential?: ModelCredential | null,
): { baseUrl?: string; apiKey?: string } {
  const defaults = registry.defaults(provider);
  const baseUrl =
    credential?.baseUrl !== undefined && credential.baseUrl !== ''
      ? credential.baseUrl
      : defaults.baseUrl;
  const apiKey =
    credential?.apiKey !== undefined && credential.apiKey !== ''
      ? credential.apiKey
      : defaults.apiKey;
  return {
    ...(baseUrl === undefined ? {} : { baseUrl }),
    ...(apiKey === undefined ? {} : { apiKey }),
  };
}
