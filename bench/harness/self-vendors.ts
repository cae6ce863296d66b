/**
 * The vendor simulators of `--self` runs, in a process of their own (so their work is neither
 * Parla's CPU nor the harness's event loop): the test fakes of Deepgram (streaming transcription),
 * OpenAI chat completions and ElevenLabs streaming speech, with configured latencies. Started by
 * self-parla.ts with a JSON settings argument; prints one JSON line `{deepgram, openai, elevenLabs}`
 * (URLs and keys) on stdout when listening, and runs until killed.
 *
 * Latency distributions: the transcriber answers a Finalize after transcriberMs + U(0, jitterMs);
 * the model's first token comes after modelMs + U(0, jitterMs); the voice sends its first audio
 * byte voiceMs + U(0, jitterMs) after each request (FakeSpeechServer.firstByteDelayMs and
 * firstByteJitterMs). self-parla.ts subtracts the means of all three. The fakes' own serving
 * time (a few ms each) is not simulated latency and is counted as Parla's.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dgResults, FakeDeepgramServer } from '../../test/support/fake-deepgram-server.js';
import { FakeOpenAiServer } from '../../test/support/fake-openai-server.js';
import { fakePcm, FakeSpeechServer } from '../../test/support/fake-voice-servers.js';

export interface VendorSettings {
  readonly transcriberMs: number;
  readonly modelMs: number;
  /** The voice's time to first byte (0 when absent, as in settings of older runs). */
  readonly voiceMs?: number;
  readonly jitterMs: number;
}

export interface VendorEndpoints {
  readonly deepgram: { readonly url: string; readonly apiKey: string };
  readonly openai: { readonly url: string; readonly apiKey: string };
  readonly elevenLabs: { readonly url: string; readonly apiKey: string };
}

/**
 * The assistant's answer: three long sentences with no inner punctuation, so each is one voice
 * request (the text chunker splits only at punctuation). The fake voice makes 40 samples of loud
 * noise per character: each sentence is about 1.8 s of audio at 16 kHz, 5 s in all, so the
 * scripts' backchannels and interruptions (0.6–3 s into an answer) land inside it, and each voice
 * request has a sentence's playing time to arrive (short sentences would make holes between
 * them that a real voice, with seconds of audio per sentence, would not).
 */
const FILLER = ' and it goes on with more words about the table you asked for'.repeat(11);
export const REPLY_SENTENCES = [1, 2, 3].map(
  (part) => `Here is part ${part} of the answer${FILLER}. `,
);

/**
 * How long the answer plays, in ms, when the voice is asked for `rateHz` audio (Parla asks at its
 * pipeline rate: 8000 Hz for 8 kHz calls, SIP included, 16000 Hz otherwise): fakePcm's length
 * for each sentence. Backchannels are judged against it (MeasureOptions.expectedReplyMs).
 */
export function replyDurationMs(rateHz: number): number {
  return REPLY_SENTENCES.reduce(
    (sum, sentence) => sum + (fakePcm(sentence.trim(), rateHz).length / 2 / rateHz) * 1000,
    0,
  );
}

export async function startVendors(settings: VendorSettings): Promise<VendorEndpoints> {
  const deepgram = new FakeDeepgramServer();
  deepgram.latencyMs = settings.transcriberMs;
  deepgram.jitterMs = settings.jitterMs;
  deepgram.finalizeReply = [
    dgResults('I would like to book a table.', { isFinal: true, speechFinal: true, duration: 1 }),
  ];
  const openai = new FakeOpenAiServer();
  openai.fallback = () => ({
    delayMs: settings.modelMs + Math.random() * settings.jitterMs,
    chunks: REPLY_SENTENCES,
    usage: { prompt_tokens: 50, completion_tokens: 400 },
  });
  const elevenLabs = new FakeSpeechServer('11labs', 'bench-voice-key');
  elevenLabs.firstByteDelayMs = settings.voiceMs ?? 0;
  elevenLabs.firstByteJitterMs = settings.jitterMs;
  await Promise.all([deepgram.start(), openai.start(), elevenLabs.start()]);
  // The fakes record every request; a long run must not keep them all.
  setInterval(() => {
    deepgram.connections.splice(0, Math.max(0, deepgram.connections.length - 1000));
    openai.requests.splice(0, Math.max(0, openai.requests.length - 1000));
    elevenLabs.requests.splice(0, Math.max(0, elevenLabs.requests.length - 1000));
  }, 5000).unref();
  return {
    deepgram: { url: deepgram.url, apiKey: deepgram.apiKey },
    openai: { url: openai.url, apiKey: 'sk-bench' },
    elevenLabs: { url: elevenLabs.url, apiKey: elevenLabs.apiKey },
  };
}

// Run as a program (by self-parla.ts), not imported.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const settings = JSON.parse(process.argv[2] ?? '{}') as VendorSettings;
  const endpoints = await startVendors(settings);
  process.stdout.write(`${JSON.stringify(endpoints)}\n`);
}
