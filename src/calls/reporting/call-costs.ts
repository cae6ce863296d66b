import { modelPrice, type PriceTable } from './price-table.js';

/** What a call used, counted while it ran. */
export interface CallUsage {
  /** From startedAt (or the first event) to endedAt. */
  readonly durationMs: number;
  readonly transportProvider: string;
  readonly transcriber: { readonly provider: string; readonly model?: string } | null;
  readonly voice: {
    readonly provider: string;
    readonly voiceId?: string;
    readonly model?: string;
  } | null;
  readonly model: { readonly provider: string; readonly model: string } | null;
  /** Characters sent to the voice (voice-input events). */
  readonly voiceCharacters: number;
  /** Assistant audio played, ms. */
  readonly voiceAudioMs: number;
  readonly promptTokens: number;
  readonly completionTokens: number;
  readonly cachedPromptTokens: number;
}

export type CostItem = Record<string, unknown> & { readonly type: string; readonly cost: number };

/** Rounded to 1e-8 USD so sums of many small prices print cleanly. */
function round(value: number): number {
  return Math.round(value * 1e8) / 1e8;
}

function minutes(ms: number): number {
  return round(Math.max(0, ms) / 60_000);
}

/**
 * `costs[]` in the platform's shapes (transport, transcriber, model with token counts, voice
 * with characters, parla, then one `analysis` item per analysis plan) and their total. Parla's own line is `type: "parla"` (the platform's
 * `vapi` line; the interface spec calls it the service's cost).
 */
export function callCosts(
  table: PriceTable,
  usage: CallUsage,
  analysis: readonly AnalysisTokenUsage[] = [],
): { costs: CostItem[]; cost: number } {
  const callMinutes = minutes(usage.durationMs);
  const costs: CostItem[] = [];
  const transport = table.transport.providers[usage.transportProvider] ?? table.transport.default;
  costs.push({
    type: 'transport',
    provider: usage.transportProvider,
    minutes: callMinutes,
    cost: round(callMinutes * transport.perMinute),
  });
  if (usage.transcriber !== null) {
    const price =
      table.transcriber.providers[usage.transcriber.provider] ?? table.transcriber.default;
    costs.push({
      type: 'transcriber',
      transcriber: { ...usage.transcriber },
      minutes: callMinutes,
      cost: round(callMinutes * price.perMinute),
    });
  }
  if (usage.model !== null) {
    const price = modelPrice(table, usage.model.provider, usage.model.model);
    const uncached = Math.max(0, usage.promptTokens - usage.cachedPromptTokens);
    const cachedRate = price.cachedPromptPerMillionTokens ?? price.promptPerMillionTokens;
    const cost =
      (uncached * price.promptPerMillionTokens +
        usage.cachedPromptTokens * cachedRate +
        usage.completionTokens * price.completionPerMillionTokens) /
      1_000_000;
    costs.push({
      type: 'model',
      model: { ...usage.model },
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      cachedPromptTokens: usage.cachedPromptTokens,
      cost: round(cost),
    });
  }
  if (usage.voice !== null) {
    const price = table.voice.providers[usage.voice.provider] ?? table.voice.default;
    const voiceMinutes = minutes(usage.voiceAudioMs);
    const cost =
      'perMillionCharacters' in price
        ? (usage.voiceCharacters * price.perMillionCharacters) / 1_000_000
        : voiceMinutes * price.perMinute;
    costs.push({
      type: 'voice',
      voice: { ...usage.voice },
      characters: usage.voiceCharacters,
      minutes: voiceMinutes,
      cost: round(cost),
    });
  }
  costs.push({
    type: 'parla',
    subType: 'normal',
    minutes: callMinutes,
    cost: round(callMinutes * table.parla.perMinute),
  });
  costs.push(...analysisCosts(table, analysis));
  return { costs, cost: round(costs.reduce((sum, item) => sum + item.cost, 0)) };
}

/** Tokens one analysis plan used after the call (see call-analysis.ts). */
export interface AnalysisTokenUsage {
  readonly analysisType: string;
  readonly model: { readonly provider: string; readonly model: string };
  readonly promptTokens: number;
  readonly completionTokens: number;
}

/** `costs[]` items of `type: "analysis"`, one per plan that used tokens, priced as the model. */
export function analysisCosts(table: PriceTable, usage: readonly AnalysisTokenUsage[]): CostItem[] {
  return usage.map((item) => {
    const price = modelPrice(table, item.model.provider, item.model.model);
    const cost =
      (item.promptTokens * price.promptPerMillionTokens +
        item.completionTokens * price.completionPerMillionTokens) /
      1_000_000;
    return {
      type: 'analysis',
      analysisType: item.analysisType,
      model: { ...item.model },
      promptTokens: item.promptTokens,
      completionTokens: item.completionTokens,
      cost: round(cost),
    };
  });
}
