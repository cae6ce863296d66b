/** What a voice adapter can do; the pipeline adapts to it. */
export interface VoiceCapabilities {
  /** Audio starts before the whole text is synthesised. */
  readonly streamingOutput: boolean;
  /** Sample rates the vendor can produce natively (others are resampled by the pipeline). */
  readonly sampleRatesHz: readonly number[];
}

export interface SynthesisRequest {
  text: string;
  /** Requested PCM16 mono output rate; must be one of the adapter's `sampleRatesHz`. */
  sampleRateHz: number;
  /** The assistant's `voice` object (provider, voiceId, model, speed, vendor fields). */
  config: Readonly<Record<string, unknown>>;
  apiKey: string | null;
  /** Overrides the vendor endpoint (a credential's base URL, tests). */
  baseUrl?: string;
}

export interface Voice {
  /** The `voice.provider` value served, e.g. `openai`, `11labs`. */
  readonly name: string;
  readonly capabilities: VoiceCapabilities;
  /**
   * Streams PCM16 mono audio chunks at `request.sampleRateHz` as they arrive. Aborting `signal`
   * cancels the vendor request at once (barge-in). Throws ProviderError.
   */
  synthesize(request: SynthesisRequest, signal: AbortSignal): AsyncIterable<Int16Array>;
}
