import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CALL_HANDLERS_MODULE } from '../../src/calls/call-handlers.js';
import {
  NO_PROVIDER_DEFAULTS,
  PIPELINE_CALL_HANDLER,
  type PipelineCallParams,
} from '../../src/calls/pipeline-call-params.js';
import { readWav } from '../../src/media/codecs/wav.js';
import { Resampler } from '../../src/media/resample/resampler.js';
import type { CallChannel } from '../../src/workers/call-channel.js';
import { WorkerHost } from '../../src/workers/host.js';
import { dgResults, FakeDeepgramServer } from '../support/fake-deepgram-server.js';
import { FakeOpenAiServer } from '../support/fake-openai-server.js';
import { FakeSpeechServer } from '../support/fake-voice-servers.js';

const speech = readWav(
  readFileSync(new URL('../fixtures/denoise/clean-speech-16k.wav', import.meta.url)),
).samples;
/** "Thanks for calling." (0.3–1.5 s of the fixture), then 1.5 s of silence. */
const utterance16k = new Int16Array(48_000);
utterance16k.set(speech.subarray(0, 1.7 * 16000));

const model = new FakeOpenAiServer();
const deepgram = new FakeDeepgramServer();
const elevenLabs = new FakeSpeechServer('11labs', 'el-key');
let host: WorkerHost;

beforeAll(async () => {
  await Promise.all([model.start(), deepgram.start(), elevenLabs.start()]);
  host = new WorkerHost({ threads: 1 });
});
afterAll(async () => {
  await host.close();
  await Promise.all([model.close(), deepgram.close(), elevenLabs.stop()]);
});
beforeEach(() => {
  model.reset();
  deepgram.reset();
});

interface RunningCall {
  channel: CallChannel;
  events: { name: string; data: Record<string, unknown> }[];
  audio: Int16Array[];
}

let calls: RunningCall[] = [];
afterEach(async () => {
  for (const call of calls) {
    call.channel.end('customer-ended-call');
  }
  await Promise.all(calls.map((call) => call.channel.ended));
  calls = [];
});

let nextId = 0;
function startCall(
  assistant: Record<string, unknown>,
  options: { rateHz?: number; vad?: 'silero' | 'energy' } = {},
): RunningCall {
  const rateHz = options.rateHz ?? 16000;
  const params: PipelineCallParams = {
    callId: `call-${++nextId}`,
    orgId: 'org-1',
    assistant: {
      model: { provider: 'openai', model: 'gpt-4o-mini' },
      transcriber: { provider: 'deepgram', model: 'nova-2' },
      voice: { provider: '11labs', voiceId: 'voice-1' },
      ...assistant,
    },
    variableValues: { name: 'Ada' },
    credentials: {
      openai: { apiKey: 'sk-test', baseUrl: model.url },
      deepgram: { apiKey: deepgram.apiKey, baseUrl: deepgram.url },
      '11labs': { apiKey: 'el-key', baseUrl: elevenLabs.url },
    },
    providers: NO_PROVIDER_DEFAULTS,
    transportSampleRateHz: rateHz,
    vad: options.vad ?? 'silero',
  };
  const channel = host.startCall(params.callId, PIPELINE_CALL_HANDLER, {
    handlerModule: CALL_HANDLERS_MODULE,
    sampleRateHz: rateHz,
    params,
  });
  const call: RunningCall = { channel, events: [], audio: [] };
  channel.on('event', (name, data) =>
    call.events.push({ name, data: data as Record<string, unknown> }),
  );
  channel.on('audio', (samples) => call.audio.push(samples));
  calls.push(call);
  return call;
}

async function waitFor(predicate: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const startedAt = Date.now();
  while (!predicate()) {
    if (Date.now() - startedAt > timeoutMs) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Streams `audio` in odd-sized chunks at twice real time. */
async function stream(call: RunningCall, audio: Int16Array, rateHz: number): Promise<void> {
  const sizes = [331, 977, 1601, 64];
  for (let offset = 0, i = 0; offset < audio.length && !call.channel.isEnded; i++) {
    const size = Math.min(sizes[i % sizes.length]!, audio.length - offset);
    call.channel.sendAudio(audio.slice(offset, offset + size));
    offset += size;
    await new Promise((resolve) => setTimeout(resolve, (size * 1000) / rateHz / 2));
  }
}

function at(rateHz: number, audio: Int16Array): Int16Array {
  if (rateHz === 16000) {
    return audio;
  }
  const resampler = new Resampler({ inputRateHz: 16000, outputRateHz: rateHz });
  const out = new Int16Array(resampler.outputLengthFor(audio.length));
  resampler.process(audio, out);
  return out;
}

const names = (call: RunningCall): string[] => call.events.map((event) => event.name);

describe('the pipeline call handler in a worker thread', () => {
  it('runs a full turn at 24 kHz with Silero: speech in, transcript → model → voice, audio out', async () => {
    deepgram.finalizeReply = [
      dgResults('Thanks for calling.', { isFinal: true, speechFinal: true, duration: 1.2 }),
    ];
    const call = startCall(
      {
        firstMessage: 'Hello {{name}}, how can I help?',
        model: {
          provider: 'openai',
          model: 'gpt-4o-mini',
          messages: [{ role: 'system', content: 'You are talking to {{name}}.' }],
          tools: [
            {
              type: 'function',
              function: { name: 'lookup', parameters: { type: 'object', properties: {} } },
            },
          ],
        },
      },
      { rateHz: 24000 },
    );
    // The first message is spoken at once, resampled 16 → 24 kHz: 480-sample frames.
    await waitFor(() => names(call).includes('voice-input'), 'the first message');
    expect(call.events.find((e) => e.name === 'voice-input')?.data.input).toBe(
      'Hello Ada, how can I help?',
    );
    await waitFor(() => call.audio.length >= 5, 'first-message audio');
    expect(call.audio.slice(0, 5).every((frame) => frame.length === 480)).toBe(true);
    await waitFor(
      () =>
        call.events.some(
          (e) =>
            e.name === 'speech-update' &&
            e.data.role === 'assistant' &&
            e.data.status === 'stopped',
        ),
      'the first message to finish',
    );

    await stream(call, at(24000, utterance16k), 24000);
    await waitFor(
      () =>
        call.events.some(
          (e) =>
            e.name === 'transcript' &&
            e.data.role === 'assistant' &&
            e.data.transcript === 'You said: Thanks for calling.',
        ),
      'the reply to be spoken',
    );
    const userSpeech = call.events.filter(
      (e) => e.name === 'speech-update' && e.data.role === 'user',
    );
    expect(userSpeech.map((e) => e.data.status).slice(0, 2)).toEqual(['started', 'stopped']);
    expect(
      call.events.some(
        (e) =>
          e.name === 'transcript' &&
          e.data.role === 'user' &&
          e.data.transcript === 'Thanks for calling.',
      ),
    ).toBe(true);
    expect(names(call)).toContain('model-output');
    expect(names(call)).toContain('metrics');
    // What reached the vendors: the prompt with variables, the tool, the voice at 16 kHz.
    const body = model.sentBody(-1);
    expect(body.messages?.[0]).toEqual({ role: 'system', content: 'You are talking to Ada.' });
    expect(JSON.stringify(body.tools)).toContain('"lookup"');
    expect(deepgram.connections[0]?.query.get('sample_rate')).toBe('16000');
    expect(deepgram.connections[0]?.audioBytes).toBeGreaterThan(16000 * 2 * 2.5);
    expect(elevenLabs.requests.at(-1)?.query.get('output_format')).toBe('pcm_16000');

    // The caller's VAD was Silero, scored in the worker's batched per-tick flush.
    const sileroInferred = (): number => {
      const stats = host.threadStats()[0]?.heartbeat?.stats.silero as
        { windowsInferred?: number } | undefined;
      return stats?.windowsInferred ?? 0;
    };
    await waitFor(() => sileroInferred() > 20, 'Silero figures in a heartbeat');

    // Host → worker control: end-call ends it as the assistant.
    call.channel.sendControl({ type: 'end-call' });
    expect(await call.channel.ended).toBe('assistant-ended-call');
    expect(call.events.at(-1)).toMatchObject({
      name: 'call-ended',
      data: { endedReason: 'assistant-ended-call' },
    });
  });

  it('ends the call with the pipeline’s endedReason when the model vendor refuses the key', async () => {
    model.enqueue({ status: 401, errorMessage: 'bad key' });
    const call = startCall(
      { firstMessageMode: 'assistant-speaks-first-with-model-generated-message' },
      { rateHz: 8000, vad: 'energy' },
    );
    expect(await call.channel.ended).toBe('pipeline-error-openai-401-unauthorized');
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]?.headers.authorization).toBe('Bearer sk-test');
    expect(call.events.at(-1)?.data.endedReason).toBe('pipeline-error-openai-401-unauthorized');

    // The thread survived: the next call on it works.
    const next = startCall({ firstMessage: 'Still here.' }, { vad: 'energy' });
    await waitFor(() => next.audio.length > 0, 'audio from the next call');
  });

  const MESSAGE = 'Hello there. '.repeat(36).trim();
  it.each([11025, 8001])(
    'speaks at a transport rate of %i Hz (frames of a fractional sample count)',
    async (rateHz) => {
      const call = startCall({ firstMessage: MESSAGE }, { rateHz, vad: 'energy' });
      // fakePcm speaks 40 samples per character (plus 10 ms) per voice request at 16 kHz: about
      // 1.2 s, 60 frames, enough for a tick with one more sample at 8001 Hz (every 50th).
      await waitFor(
        () =>
          call.events.some(
            (e) =>
              e.name === 'speech-update' &&
              e.data.role === 'assistant' &&
              e.data.status === 'stopped',
          ),
        'the first message to play',
      );
      const most = Math.ceil((rateHz * 20) / 1000);
      expect(call.audio.every((f) => f.length === most || f.length === most - 1)).toBe(true);
      expect(call.audio.length).toBeGreaterThanOrEqual(55);
      expect(call.audio.some((f) => f.length === most)).toBe(true);
      expect(call.channel.isEnded).toBe(false);
    },
  );

  it('ends the call when the transcriber refuses, and when a provider is unknown', async () => {
    deepgram.refuseStatus = 403;
    const refused = startCall({ firstMessageMode: 'assistant-waits-for-user' }, { vad: 'energy' });
    expect(await refused.channel.ended).toBe('pipeline-error-deepgram-transcriber-failed');

    const unknown = startCall({ voice: { provider: 'nope' } }, { vad: 'energy' });
    expect(await unknown.channel.ended).toBe('pipeline-error-nope-voice-failed');
  });

  it('starts the conversation with model.messages and says a call.ending hook before ending', async () => {
    model.enqueue({ chunks: ['Welcome back.'] });
    const call = startCall(
      {
        firstMessageMode: 'assistant-speaks-first-with-model-generated-message',
        silenceTimeoutSeconds: 1,
        hooks: [
          {
            on: 'call.ending',
            filters: [{ type: 'oneOf', key: 'call.endedReason', oneOf: ['silence-timed-out'] }],
            do: [{ type: 'say', exact: 'Goodbye, {{name}}.' }],
          },
        ],
        model: {
          provider: 'openai',
          model: 'gpt-4o-mini',
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'My name is {{name}}.' },
            { role: 'assistant', content: 'Hello {{name}}.' },
          ],
        },
      },
      { vad: 'energy' },
    );
    expect(await call.channel.ended).toBe('silence-timed-out');
    expect(model.sentBody(0).messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Hello Ada.' },
    ]);
    const said = call.events.filter((e) => e.name === 'voice-input').map((e) => e.data.input);
    expect(said).toEqual(['Welcome back.', 'Goodbye, Ada.']);
  });

  it('answers tool calls through tool-results and routes live control', async () => {
    model.enqueue(
      { toolCalls: [{ id: 'call-1', name: 'lookup', argumentChunks: ['{"q":', '"x"}'] }] },
      { chunks: ['The answer is 42.'] },
    );
    const call = startCall(
      {
        firstMessageMode: 'assistant-speaks-first-with-model-generated-message',
        model: {
          provider: 'openai',
          model: 'gpt-4o-mini',
          tools: [{ type: 'function', function: { name: 'lookup' } }],
        },
      },
      { vad: 'energy' },
    );
    await waitFor(() => names(call).includes('tool-calls'), 'tool-calls');
    const toolCalls = call.events.find((e) => e.name === 'tool-calls')?.data;
    expect(toolCalls).toMatchObject({ toolCalls: [{ id: 'call-1', name: 'lookup' }] });
    call.channel.sendControl({
      type: 'tool-results',
      turnId: toolCalls?.turnId,
      results: [{ toolCallId: 'call-1', name: 'lookup', result: '42' }],
    });
    await waitFor(() => model.requests.length === 2, 'the second model request');
    const messages = model.sentBody(1).messages ?? [];
    expect(messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call-1', content: '42' });
    await waitFor(() => names(call).includes('voice-input'), 'the answer spoken');

    call.channel.sendControl({ type: 'control', control: 'no-such-control' });
    await waitFor(() => names(call).includes('control-rejected'), 'a rejected control');
    call.channel.sendControl({ type: 'say', content: 'One more thing.' });
    await waitFor(
      () => call.events.some((e) => e.name === 'voice-input' && e.data.input === 'One more thing.'),
      'the say',
    );
    expect(call.channel.isEnded).toBe(false);
  });
});
