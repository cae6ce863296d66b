import type { ProviderError } from '../provider-error.js';

/** What a transcriber adapter can do; the pipeline adapts to it. */
export interface TranscriberCapabilities {
  /** Sends partial (interim) transcripts before finals. */
  readonly interimResults: boolean;
  /** Signals the end of the speaker's turn itself (e.g. Deepgram `speech_final`). */
  readonly endOfTurn: boolean;
}

export type TranscriberEvent =
  | {
      type: 'transcript';
      text: string;
      /** A final result replaces the partials of the same span. */
      isFinal: boolean;
      /** The vendor believes the speaker finished (endpoint). */
      speechFinal: boolean;
      confidence: number;
      /** Span of the audio, in ms from the start of the stream. */
      startMs: number;
      endMs: number;
    }
  | { type: 'speech-started'; atMs: number }
  | { type: 'utterance-end'; atMs: number }
  | { type: 'error'; error: ProviderError }
  | { type: 'closed' };

export interface TranscriberOpenOptions {
  /** PCM16 mono sample rate of the audio that will be pushed. */
  sampleRateHz: number;
  /** The assistant's `transcriber` object (provider, model, language, keywords, vendor fields). */
  config: Readonly<Record<string, unknown>>;
  /** Vendor key from the assistant's credentials or the server configuration; null when none. */
  apiKey: string | null;
  /** Overrides the vendor endpoint (a credential's `apiUrl`, tests). */
  baseUrl?: string;
  /** Receives every event, in order. Must not throw. */
  onEvent: (event: TranscriberEvent) => void;
}

export interface TranscriberStream {
  /** Queues PCM16 audio; never blocks. The samples may be reused by the caller after return. */
  pushAudio(samples: Int16Array): void;
  /** Asks the vendor to finalise what it has heard so far. */
  finalize(): void;
  /** Ends the stream; resolves once the vendor connection is closed. */
  close(): Promise<void>;
}

export interface Transcriber {
  /** The `transcriber.provider` value served, e.g. `deepgram`. */
  readonly name: string;
  readonly capabilities: TranscriberCapabilities;
  /** Connects; rejects with a ProviderError when the vendor cannot be reached or refuses. */
  open(options: TranscriberOpenOptions, signal: AbortSignal): Promise<TranscriberStream>;
}
