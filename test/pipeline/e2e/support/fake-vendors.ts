import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { readWav } from '../../../../src/media/codecs/wav.js';
import { createModelRegistry } from '../../../../src/providers/llm/registry.js';
import { createTranscriberRegistry } from '../../../../src/providers/stt/registry.js';
import { voiceFor } from '../../../../src/providers/tts/fallback-voice.js';
import { createVoiceRegistry } from '../../../../src/providers/tts/registry.js';
import { FakeCustomTranscriberServer } from '../../../support/fake-custom-transcriber-server.js';
import { dgResults, FakeDeepgramServer } from '../../../support/fake-deepgram-server.js';
import { FakeOpenAiServer, lastUserText } from '../../../support/fake-openai-server.js';
import { FakeCartesiaServer, FakeSpeechServer } from '../../../support/fake-voice-servers.js';
import { RATE_HZ, RealtimeDriver, type DriverPipelineOptions } from './realtime-driver.js';

export const MODEL_KEY = 'sk-fake-model';
export const VOICE_KEY = 'test-key';

const CALLERS = new URL('../../../../bench/fixtures/callers/', import.meta.url);
const SPEECH = new URL('../../../fixtures/speech/', import.meta.url);

/**
 * A 16 kHz speech fixture: `bench/fixtures/callers/<name>.wav` (espeak-ng phrases of the
 * benchmark's callers) or, with `speech/`, `test/fixtures/speech/<name>.wav`.
 */
export function wav(name: string): Int16Array {
  const url = name.startsWith('speech/')
    ? new URL(`${name.slice('speech/'.length)}.wav`, SPEECH)
    : new URL(`${name}.wav`, CALLERS);
  const audio = readWav(readFileSync(url));
  if (audio.sampleRateHz !== RATE_HZ) {
    throw new Error(`${name}: expected ${RATE_HZ} Hz, got ${audio.sampleRateHz}`);
  }
  return audio.samples;
}

export interface Vendors {
  readonly deepgram: FakeDeepgramServer;
  readonly custom: FakeCustomTranscriberServer;
  readonly openai: FakeOpenAiServer;
  readonly elevenLabs: FakeSpeechServer;
  readonly openaiSpeech: FakeSpeechServer;
  readonly cartesia: FakeCartesiaServer;
  /** The providers FallbackVoice gave up on, in order, during this test. */
  readonly voiceFallbacks: string[];
  /** Pipeline options through the real adapters (Deepgram, OpenAI chat, ElevenLabs by default). */
  options(overrides?: VendorOverrides): DriverPipelineOptions;
  /** A driver on `options(overrides)`, stopped after the test. */
  driver(overrides?: VendorOverrides): RealtimeDriver;
  /** Sends a Deepgram `Results` message on the live connection (the vendor's transcript). */
  transcript(text: string, final?: { speechFinal: boolean }): void;
  /**
   * Answers the pipeline's next Finalize (sent when VAD hears the caller stop) with a Deepgram
   * final carrying speech_final, as Deepgram does; once.
   */
  finalOnFinalize(text: string): void;
}

export interface VendorOverrides extends Partial<
  Omit<DriverPipelineOptions, 'transcriber' | 'voice' | 'model'>
> {
  /** The assistant's `transcriber` object; default Deepgram nova-2. */
  readonly transcriber?: Record<string, unknown>;
  /** The assistant's `voice` object; default ElevenLabs. */
  readonly voice?: Record<string, unknown>;
  /** Key for the primary voice (default the fakes' key). */
  readonly voiceApiKey?: string;
  /** Keep a copy of every output frame (RealtimeDriver.audio()). */
  readonly recordAudio?: boolean;
  /** Key for the primary transcriber (default the fake Deepgram's key). */
  readonly transcriberApiKey?: string;
}

/**
 * Starts every fake vendor once for the file, resets them before each test and stops the test's
 * drivers after it.
 */
export function useFakeVendors(): Vendors {
  const deepgram = new FakeDeepgramServer();
  const custom = new FakeCustomTranscriberServer();
  const openai = new FakeOpenAiServer();
  // The voice fakes cannot forget their scripts, so every test gets new ones.
  let elevenLabs = new FakeSpeechServer('11labs', VOICE_KEY);
  let openaiSpeech = new FakeSpeechServer('openai', VOICE_KEY);
  let cartesia = new FakeCartesiaServer(VOICE_KEY);
  const echo = openai.fallback;
  const drivers: RealtimeDriver[] = [];
  const watchers: NodeJS.Timeout[] = [];
  const voiceFallbacks: string[] = [];

  beforeAll(async () => {
    await Promise.all([deepgram.start(), custom.start(), openai.start()]);
  });
  afterAll(async () => {
    await Promise.all([deepgram.close(), custom.close(), openai.close()]);
  });
  beforeEach(async () => {
    deepgram.reset();
    custom.reset();
    openai.reset();
    openai.fallback = echo;
    voiceFallbacks.length = 0;
    elevenLabs = new FakeSpeechServer('11labs', VOICE_KEY);
    openaiSpeech = new FakeSpeechServer('openai', VOICE_KEY);
    cartesia = new FakeCartesiaServer(VOICE_KEY);
    await Promise.all([elevenLabs.start(), openaiSpeech.start(), cartesia.start()]);
  });
  afterEach(async () => {
    for (const timer of watchers.splice(0)) {
      clearInterval(timer);
    }
    await Promise.all(drivers.splice(0).map((driver) => driver.stop()));
    await Promise.all([elevenLabs.stop(), openaiSpeech.stop(), cartesia.stop()]);
  });

  const endpoints = (provider: string): { apiKey: string | null; baseUrl?: string } => {
    switch (provider) {
      case 'deepgram':
        return { apiKey: deepgram.apiKey, baseUrl: deepgram.url };
      case 'custom-transcriber':
        return { apiKey: null };
      case '11labs':
        return { apiKey: VOICE_KEY, baseUrl: elevenLabs.url };
      case 'openai':
        return { apiKey: VOICE_KEY, baseUrl: openaiSpeech.url };
      case 'cartesia':
        return { apiKey: VOICE_KEY, baseUrl: cartesia.url };
      default:
        return { apiKey: null };
    }
  };

  const vendors: Vendors = {
    deepgram,
    custom,
    openai,
    voiceFallbacks,
    get elevenLabs() {
      return elevenLabs;
    },
    get openaiSpeech() {
      return openaiSpeech;
    },
    get cartesia() {
      return cartesia;
    },
    options(overrides = {}) {
      const { transcriber, voice, voiceApiKey, transcriberApiKey, recordAudio, ...pipeline } =
        overrides;
      void recordAudio;
      const transcriberConfig = transcriber ?? { provider: 'deepgram', model: 'nova-2' };
      const voiceConfig = voice ?? { provider: '11labs', voiceId: 'rachel' };
      const transcribers = createTranscriberRegistry({
        deepgram: { closeTimeoutMs: 200 },
      });
      const voices = createVoiceRegistry({ firstByteTimeoutMs: 3000 });
      const models = createModelRegistry({
        openaiBaseUrl: openai.url,
        openaiApiKey: MODEL_KEY,
        firstByteTimeoutMs: 3000,
      });
      const primaryTranscriber = String(transcriberConfig['provider']);
      const primaryVoice = String(voiceConfig['provider']);
      const transcriberEndpoint = endpoints(primaryTranscriber);
      const voiceEndpoint = endpoints(primaryVoice);
      return {
        model: models.get('openai')!,
        modelConfig: {
          model: 'gpt-4o-mini',
          systemPrompt: 'You are a friendly receptionist.',
          apiKey: MODEL_KEY,
          baseUrl: openai.url,
        },
        transcriber: transcribers.forConfig(transcriberConfig, { credentialsFor: endpoints })!,
        transcriberConfig: {
          config: transcriberConfig,
          apiKey: transcriberApiKey ?? transcriberEndpoint.apiKey,
          ...(transcriberEndpoint.baseUrl === undefined
            ? {}
            : { baseUrl: transcriberEndpoint.baseUrl }),
        },
        voice: voiceFor(
          voices,
          voiceConfig,
          (config) => endpoints(String(config['provider'])),
          (event) => voiceFallbacks.push(event.provider),
        )!,
        voiceConfig: {
          config: voiceConfig,
          apiKey: voiceApiKey ?? voiceEndpoint.apiKey,
          ...(voiceEndpoint.baseUrl === undefined ? {} : { baseUrl: voiceEndpoint.baseUrl }),
        },
        firstMessageMode: 'assistant-waits-for-user',
        ...pipeline,
      };
    },
    driver(overrides) {
      const driver = new RealtimeDriver(vendors.options(overrides), overrides?.recordAudio);
      drivers.push(driver);
      return driver;
    },
    transcript(text, final) {
      const connection = deepgram.connections.at(-1);
      if (connection === undefined) {
        throw new Error('no Deepgram connection');
      }
      connection.socket.send(
        JSON.stringify(
          dgResults(text, {
            isFinal: final !== undefined,
            speechFinal: final?.speechFinal ?? false,
          }),
        ),
      );
    },
    finalOnFinalize(text) {
      const finalizes = (): number =>
        deepgram.connections.at(-1)?.controls.filter((type) => type === 'Finalize').length ?? 0;
      const seen = finalizes();
      const timer = setInterval(() => {
        if (finalizes() > seen) {
          clearInterval(timer);
          vendors.transcript(text, { speechFinal: true });
        }
      }, 2);
      watchers.push(timer);
    },
  };
  return vendors;
}

export { lastUserText };
