/**
 * In-process vendors for the pipeline-calls benchmark, with fixed latencies, so that what the
 * benchmark measures beyond them is Parla's own time. They run inside the call worker thread
 * (registered by bench-call-handlers.ts); the main thread imports the latencies to subtract them.
 */
import type { WorkerProviders } from '../../src/calls/worker-providers.js';
import type {
  ModelEvent,
  ModelProvider,
  ModelProviderRegistry,
} from '../../src/providers/llm/model-provider.js';
import type { TranscriberRegistry } from '../../src/providers/stt/registry.js';
import type {
  Transcriber,
  TranscriberOpenOptions,
  TranscriberStream,
} from '../../src/providers/stt/transcriber.js';
import type { VoiceRegistry } from '../../src/providers/tts/registry.js';
import type { SynthesisRequest, Voice } from '../../src/providers/tts/voice.js';
import { levelDbfs } from '../../src/pipeline/vad/energy-vad.js';

/** The fake transcriber finalises this long after it has heard QUIET_MS of quiet. */
export const TRANSCRIBER_LATENCY_MS = 50;
export const TRANSCRIBER_QUIET_MS = 100;
export const MODEL_FIRST_TOKEN_MS = 200;
export const VOICE_FIRST_BYTE_MS = 100;
export const REPLY_TEXT = 'Sure, I can help with that.';
const SPEECH_DBFS = -45;
const MIN_SPEECH_MS = 200;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Finalises "Thanks for calling." once each run of speech is followed by quiet. */
class FakeTranscriber implements Transcriber {
  readonly name = 'deepgram';
  readonly capabilities = { interimResults: false, endOfTurn: false };

  open(options: TranscriberOpenOptions): Promise<TranscriberStream> {
    let speechMs = 0;
    let quietMs = 0;
    let closed = false;
    const timers = new Set<NodeJS.Timeout>();
    const stream: TranscriberStream = {
      pushAudio(samples) {
        const ms = (samples.length * 1000) / options.sampleRateHz;
        if (levelDbfs(samples) > SPEECH_DBFS) {
          speechMs += ms;
          quietMs = 0;
          return;
        }
        quietMs += ms;
        if (speechMs >= MIN_SPEECH_MS && quietMs >= TRANSCRIBER_QUIET_MS) {
          speechMs = 0;
          const timer = setTimeout(() => {
            timers.delete(timer);
            if (!closed) {
              options.onEvent({
                type: 'transcript',
                text: 'Thanks for calling.',
                isFinal: true,
                speechFinal: true,
                confidence: 0.99,
                startMs: 0,
                endMs: 0,
              });
            }
          }, TRANSCRIBER_LATENCY_MS);
          timers.add(timer);
        }
      },
      finalize: () => undefined,
      close() {
        closed = true;
        for (const timer of timers) {
          clearTimeout(timer);
        }
        return Promise.resolve();
      },
    };
    return Promise.resolve(stream);
  }
}

class FakeModel implements ModelProvider {
  readonly name = 'openai';

  async *stream(_request: unknown, signal: AbortSignal): AsyncIterable<ModelEvent> {
    await sleep(MODEL_FIRST_TOKEN_MS, signal);
    yield { type: 'text', delta: REPLY_TEXT };
    yield { type: 'done', finishReason: 'stop' };
  }
}

/** 100 ms of a 220 Hz tone per piece, 60 ms of audio per character, pieces every 20 ms. */
class FakeVoice implements Voice {
  readonly name = '11labs';
  readonly capabilities = { streamingOutput: true, sampleRatesHz: [8000, 16000] };
  readonly #pieces = new Map<number, Int16Array>();

  async *synthesize(request: SynthesisRequest, signal: AbortSignal): AsyncIterable<Int16Array> {
    await sleep(VOICE_FIRST_BYTE_MS, signal);
    const rate = request.sampleRateHz;
    let piece = this.#pieces.get(rate);
    if (piece === undefined) {
      piece = new Int16Array(rate / 10);
      for (let i = 0; i < piece.length; i++) {
        piece[i] = Math.round(6000 * Math.sin((2 * Math.PI * 220 * i) / rate));
      }
      this.#pieces.set(rate, piece);
    }
    const pieces = Math.ceil((request.text.length * 60) / 100);
    for (let i = 0; i < pieces; i++) {
      yield piece;
      await sleep(20, signal);
    }
  }
}

export function fakeWorkerProviders(): WorkerProviders {
  const model = new FakeModel();
  const transcriber = new FakeTranscriber();
  const voice = new FakeVoice();
  const models: ModelProviderRegistry = { get: () => model, defaults: () => ({}) };
  const transcribers: TranscriberRegistry = {
    get: () => transcriber,
    forConfig: () => transcriber,
  };
  const voices: VoiceRegistry = { get: () => voice, defaults: () => ({}) };
  return { models, transcribers, voices };
}
