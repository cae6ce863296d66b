import { describe, expect, it } from 'vitest';
import { AnthropicMessagesProvider } from '../../../src/providers/llm/anthropic-messages.js';
import { OpenAiChatProvider } from '../../../src/providers/llm/openai-chat.js';
import { createModelRegistry, resolveModelEndpoint } from '../../../src/providers/llm/registry.js';

const base = { openaiBaseUrl: 'https://api.openai.com/v1', openaiApiKey: 'sk-openai' };

describe('createModelRegistry', () => {
  it('serves openai, anthropic and custom-llm', () => {
    const registry = createModelRegistry(base);
    expect(registry.get('openai')).toBeInstanceOf(OpenAiChatProvider);
    expect(registry.get('anthropic')).toBeInstanceOf(AnthropicMessagesProvider);
    expect(registry.get('anthropic')?.name).toBe('anthropic');
    expect(registry.get('custom-llm')?.name).toBe('custom-llm');
    expect(registry.get('groq')).toBeUndefined();
  });

  it('gives anthropic the public base URL and no key by default', () => {
    const registry = createModelRegistry(base);
    expect(registry.defaults('anthropic')).toEqual({ baseUrl: 'https://api.anthropic.com/v1' });
    expect(createModelRegistry({ ...base, anthropicApiKey: '' }).defaults('anthropic')).toEqual({
      baseUrl: 'https://api.anthropic.com/v1',
    });
  });

  it('takes anthropic base URL and key from the config', () => {
    const registry = createModelRegistry({
      ...base,
      anthropicBaseUrl: 'http://proxy.local/v1',
      anthropicApiKey: 'sk-ant',
    });
    expect(registry.defaults('anthropic')).toEqual({
      baseUrl: 'http://proxy.local/v1',
      apiKey: 'sk-ant',
    });
    expect(registry.defaults('openai')).toEqual({
      baseUrl: 'https://api.openai.com/v1',
      apiKey: 'sk-openai',
    });
    expect(registry.defaults('custom-llm')).toEqual({});
    expect(createModelRegistry({ ...base, openaiApiKey: '' }).defaults('openai')).toEqual({
      baseUrl: 'https://api.openai.com/v1',
    });
  });
});

describe('resolveModelEndpoint', () => {
  const registry = createModelRegistry({ ...base, anthropicApiKey: 'sk-ant' });

  it('lets a credential base URL and key win over the defaults', () => {
    expect(
      resolveModelEndpoint(registry, 'anthropic', {
        apiKey: 'sk-cred',
        baseUrl: 'https://gateway.example/v1',
      }),
    ).toEqual({ baseUrl: 'https://gateway.example/v1', apiKey: 'sk-cred' });
  });

  it('falls back to the defaults for missing or empty credential fields', () => {
    expect(resolveModelEndpoint(registry, 'anthropic', { apiKey: 'sk-cred', baseUrl: '' })).toEqual(
      { baseUrl: 'https://api.anthropic.com/v1', apiKey: 'sk-cred' },
    );
    expect(resolveModelEndpoint(registry, 'anthropic', null)).toEqual({
      baseUrl: 'https://api.anthropic.com/v1',
      apiKey: 'sk-ant',
    });
    expect(resolveModelEndpoint(registry, 'custom-llm')).toEqual({});
  });
});
