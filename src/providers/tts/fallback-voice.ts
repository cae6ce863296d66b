import { ParlaError } from '../../core/errors.js';
import {
  RESAMPLER_RATES_HZ,
  Resampler,
  type ResamplerRateHz,
} from '../../media/resample/resampler.js';
import type { VoiceRegistry } from './registry.js';
import type { SynthesisRequest, Voice, VoiceCapabilities } from './voice.js';

/** The key and endpoint to use for one voice config (a fallback voice's provider has its own). */
export interface VoiceCredentials {
  apiKey: string | null;
  baseUrl?: string;
}

export type CredentialLookup = (config: Readonly<Record<string, unknown>>) => VoiceCredentials;

export interface FallbackEvent {
  /** The index in [primary, ...fallbackPlan.voices] that failed. */
  index: number;
  provider: string;
  error: unknown;
}

interface Candidate {
  index: number;
  provider: string;
  voice: Voice | undefined;
  config: Readonly<Record<string, unknown>>;
}

/**
 * The primary voice, then each of `voice.fallbackPlan.voices` in order: a voice that fails before
 * its first audio sample hands over to the next. Once audio has flowed, a failure is final (the
 * caller heard part of the sentence already). Aborting never falls over. A fallback voice that
 * cannot produce the requested rate natively is resampled to it.
 */
export class FallbackVoice implements Voice {
  readonly name: string;
  readonly capabilities: VoiceCapabilities;
  readonly #primary: Voice;
  readonly #registry: Pick<VoiceRegistry, 'get'>;
  readonly #credentials: CredentialLookup;
  readonly #onFallback: ((event: FallbackEvent) => void) | undefined;

  constructor(
    primary: Voice,
    registry: Pick<VoiceRegistry, 'get'>,
    credentials: CredentialLookup,
    onFallback?: (event: FallbackEvent) => void,
  ) {
    this.name = primary.name;
    this.capabilities = primary.capabilities;
    this.#primary = primary;
    this.#registry = registry;
    this.#credentials = credentials;
    this.#onFallback = onFallback;
  }

  async *synthesize(request: SynthesisRequest, signal: AbortSignal): AsyncGenerator<Int16Array> {
    let lastError: unknown = null;
    for (const candidate of this.#candidates(request.config)) {
      signal.throwIfAborted();
      let started = false;
      try {
        if (candidate.voice === undefined) {
          throw new ParlaError('ERR_BAD_REQUEST', `no voice provider named ${candidate.provider}`);
        }
        const attempt: SynthesisRequest =
          candidate.index === 0
            ? request
            : {
                text: request.text,
                sampleRateHz: request.sampleRateHz,
                config: candidate.config,
                ...this.#credentials(candidate.config),
              };
        for await (const chunk of atRate(candidate.voice, attempt, signal)) {
          if (chunk.length > 0) {
            started = true;
            yield chunk;
          }
        }
        return;
      } catch (error) {
        if (started || signal.aborted) {
          throw error;
        }
        lastError = error;
        this.#onFallback?.({ index: candidate.index, provider: candidate.provider, error });
      }
    }
    throw lastError;
  }

  *#candidates(config: Readonly<Record<string, unknown>>): Generator<Candidate> {
    yield { index: 0, provider: this.#primary.name, voice: this.#primary, config };
    const voices = fallbackVoices(config);
    for (const [i, fallback] of voices.entries()) {
      const provider = typeof fallback['provider'] === 'string' ? fallback['provider'] : '';
      yield { index: i + 1, provider, voice: this.#registry.get(provider), config: fallback };
    }
  }
}

/** `config.fallbackPlan.voices`, keeping only objects. */
export function fallbackVoices(
  config: Readonly<Record<string, unknown>>,
): Readonly<Record<string, unknown>>[] {
  const plan = config['fallbackPlan'] as { voices?: unknown } | null | undefined;
  const voices = plan !== null && typeof plan === 'object' ? plan.voices : undefined;
  if (!Array.isArray(voices)) {
    return [];
  }
  return voices.filter(
    (voice): voice is Record<string, unknown> => voice !== null && typeof voice === 'object',
  );
}

/**
 * The voice for an assistant's `voice` config: its provider's adapter, wrapped in a FallbackVoice
 * when the config has a fallback plan. Keys and base URLs of fallback voices come from
 * `credentials`, by default the registry's defaults. Undefined when the provider is unknown.
 */
export function voiceFor(
  registry: VoiceRegistry,
  config: Readonly<Record<string, unknown>>,
  credentials?: CredentialLookup,
  onFallback?: (event: FallbackEvent) => void,
): Voice | undefined {
  const provider = typeof config['provider'] === 'string' ? config['provider'] : '';
  const primary = registry.get(provider);
  if (primary === undefined || fallbackVoices(config).length === 0) {
    return primary;
  }
  const lookup =
    credentials ??
    ((voice: Readonly<Record<string, unknown>>): VoiceCredentials => {
      const name = typeof voice['provider'] === 'string' ? voice['provider'] : '';
      const defaults = registry.defaults(name);
      return {
        apiKey: defaults.apiKey ?? null,
        ...(defaults.baseUrl === undefined ? {} : { baseUrl: defaults.baseUrl }),
      };
    });
  return new FallbackVoice(primary, registry, lookup, onFallback);
}

/** The voice's audio at `request.sampleRateHz`, resampled when the voice cannot make that rate. */
async function* atRate(
  voice: Voice,
  request: SynthesisRequest,
  signal: AbortSignal,
): AsyncGenerator<Int16Array> {
  const wanted = request.sampleRateHz;
  const native = voice.capabilities.sampleRatesHz;
  if (native.includes(wanted)) {
    yield* voice.synthesize(request, signal);
    return;
  }
  const convertible = (rate: number): rate is ResamplerRateHz =>
    (RESAMPLER_RATES_HZ as readonly number[]).includes(rate);
  const source = [...native]
    .filter(convertible)
    .sort((a, b) => Math.abs(a - wanted) - Math.abs(b - wanted))[0];
  if (source === undefined || !convertible(wanted)) {
    throw new ParlaError(
      'ERR_BAD_REQUEST',
      `${voice.name}: cannot produce ${wanted} Hz (native ${native.join(', ')} Hz)`,
    );
  }
  const resampler = new Resampler({ inputRateHz: source, outputRateHz: wanted });
  for await (const chunk of voice.synthesize({ ...request, sampleRateHz: source }, signal)) {
    const out = new Int16Array(resampler.outputLengthFor(chunk.length));
    resampler.process(chunk, out);
    if (out.length > 0) {
      yield out;
    }
  }
}
