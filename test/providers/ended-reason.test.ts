import { describe, expect, it } from 'vitest';
import {
  endedReasonForProviderError,
  endedReasonVendor,
} from '../../src/providers/ended-reason.js';
import { ProviderError } from '../../src/providers/provider-error.js';

const error = (provider: string, status: number | null): ProviderError =>
  new ProviderError(provider, 'failed', status);

describe('endedReasonForProviderError', () => {
  it.each([
    ['openai', 400, 'pipeline-error-openai-400-bad-request-validation-failed'],
    ['openai', 401, 'pipeline-error-openai-401-unauthorized'],
    ['anthropic', 403, 'pipeline-error-anthropic-403-model-access-denied'],
    ['anthropic', 429, 'pipeline-error-anthropic-429-exceeded-quota'],
    ['anthropic', 500, 'call.in-progress.error-providerfault-anthropic-500-server-error'],
    ['openai', 502, 'call.in-progress.error-providerfault-openai-500-server-error'],
    ['openai', 503, 'call.in-progress.error-providerfault-openai-503-server-overloaded-error'],
    [
      'anthropic',
      529,
      'call.in-progress.error-providerfault-anthropic-503-server-overloaded-error',
    ],
    ['custom-llm', 404, 'pipeline-error-custom-llm-llm-failed'],
    ['custom-llm', 200, 'pipeline-error-custom-llm-llm-failed'],
    ['openai', null, 'pipeline-error-openai-llm-failed'],
  ])('model %s with status %s → %s', (provider, status, reason) => {
    expect(endedReasonForProviderError('model', provider, error(provider, status))).toBe(reason);
  });

  it.each([
    ['voice', '11labs', 500, 'pipeline-error-eleven-labs-voice-failed'],
    ['voice', 'openai', 401, 'pipeline-error-openai-voice-failed'],
    ['voice', 'cartesia', null, 'pipeline-error-cartesia-voice-failed'],
    ['transcriber', 'deepgram', 503, 'pipeline-error-deepgram-transcriber-failed'],
    ['transcriber', 'assembly-ai', 401, 'pipeline-error-assembly-ai-transcriber-failed'],
  ] as const)('%s %s with status %s → %s', (kind, provider, status, reason) => {
    expect(endedReasonForProviderError(kind, provider, error(provider, status))).toBe(reason);
  });

  it('spells vendors as the platform does', () => {
    expect(endedReasonVendor('11labs')).toBe('eleven-labs');
    expect(endedReasonVendor('deep-seek')).toBe('deep-seek');
    expect(endedReasonVendor('Azure OpenAI')).toBe('azure-openai');
    expect(endedReasonVendor('')).toBe('unknown');
  });
});
