/**
 * List prices of common OpenAI models in USD per million tokens [prompt, completion]. Dated
 * variants match by prefix (longest first); unknown models and custom LLMs cost 0, since Parla
 * cannot know what a self-hosted or unlisted model costs.
 */
const PRICES_PER_MILLION: Readonly<Record<string, readonly [number, number]>> = {
  'gpt-4o': [2.5, 10],
  'gpt-4o-mini': [0.15, 0.6],
  'gpt-4.1': [2, 8],
  'gpt-4.1-mini': [0.4, 1.6],
  'gpt-4.1-nano': [0.1, 0.4],
  'gpt-4-turbo': [10, 30],
  'gpt-3.5-turbo': [0.5, 1.5],
};

const PREFIXES = Object.keys(PRICES_PER_MILLION).sort((a, b) => b.length - a.length);

export interface ModelCost {
  type: 'model';
  model: { provider: string; model: string };
  promptTokens: number;
  completionTokens: number;
  cost: number;
}

export function modelCost(
  provider: string,
  model: string,
  promptTokens: number,
  completionTokens: number,
): ModelCost {
  const prefix =
    provider === 'openai'
      ? PREFIXES.find((p) => model === p || model.startsWith(`${p}-`))
      : undefined;
  const [prompt, completion] =
    prefix === undefined ? [0, 0] : (PRICES_PER_MILLION[prefix] ?? [0, 0]);
  const cost = (promptTokens * prompt + completionTokens * completion) / 1_000_000;
  return {
    type: 'model',
    model: { provider, model },
    promptTokens,
    completionTokens,
    cost: Math.round(cost * 1e8) / 1e8,
  };
}
