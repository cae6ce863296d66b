import type { Doc } from '../../store/resource-store.js';
import type { ObservedEvent } from '../call-observer.js';
import type { CallUsage } from './call-costs.js';

/**
 * Pipeline events that report model token usage (`promptTokens`, `completionTokens`, optional
 * `cachedPromptTokens`), one per model request: the pipeline's `model-usage`.
 */
export const MODEL_USAGE_EVENTS: ReadonlySet<string> = new Set(['model-usage', 'usage']);

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function obj(value: unknown): Doc | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Doc)
    : undefined;
}

/** Counts what a call used: voice characters and audio, model tokens. */
export class UsageCounter {
  #voiceCharacters = 0;
  #assistantAudioMs = 0;
  #promptTokens = 0;
  #completionTokens = 0;
  #cachedPromptTokens = 0;

  onEvent(event: ObservedEvent): void {
    if (event.type === 'voice-input' && typeof event.input === 'string') {
      this.#voiceCharacters += event.input.length;
    } else if (MODEL_USAGE_EVENTS.has(event.type)) {
      this.#promptTokens += count(event.promptTokens);
      this.#completionTokens += count(event.completionTokens);
      this.#cachedPromptTokens += count(event.cachedPromptTokens);
    }
  }

  addAssistantAudio(samples: number, sampleRateHz: number): void {
    if (sampleRateHz > 0) {
      this.#assistantAudioMs += (samples * 1000) / sampleRateHz;
    }
  }

  /** The call's usage; `startEpochMs` is used when the call has no startedAt. */
  usage(call: Doc, setup: { assistant: Doc }, startEpochMs: number | null): CallUsage {
    const started = Date.parse(str(call.startedAt) ?? '');
    const ended = Date.parse(str(call.endedAt) ?? '');
    const from = Number.isNaN(started) ? startEpochMs : started;
    const durationMs = from === null || Number.isNaN(ended) ? 0 : Math.max(0, ended - from);
    const transcriber = obj(setup.assistant.transcriber);
    const voice = obj(setup.assistant.voice);
    const model = obj(setup.assistant.model);
    const transport = obj(call.transport);
    return {
      durationMs,
      transportProvider: str(transport?.provider) ?? str(call.type) ?? 'unknown',
      transcriber:
        str(transcriber?.provider) === undefined
          ? null
          : {
              provider: str(transcriber?.provider)!,
              ...(str(transcriber?.model) !== undefined ? { model: str(transcriber?.model)! } : {}),
            },
      voice:
        str(voice?.provider) === undefined
          ? null
          : {
              provider: str(voice?.provider)!,
              ...(str(voice?.voiceId) !== undefined ? { voiceId: str(voice?.voiceId)! } : {}),
              ...(str(voice?.model) !== undefined ? { model: str(voice?.model)! } : {}),
            },
      model:
        str(model?.provider) === undefined
          ? null
          : { provider: str(model?.provider)!, model: str(model?.model) ?? '' },
      voiceCharacters: this.#voiceCharacters,
      voiceAudioMs: this.#assistantAudioMs,
      promptTokens: this.#promptTokens,
      completionTokens: this.#completionTokens,
      cachedPromptTokens: this.#cachedPromptTokens,
    };
  }
}
