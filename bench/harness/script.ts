import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { readWav } from '../../src/media/codecs/wav.js';
import { Resampler, isResamplerRate } from '../../src/media/resample/resampler.js';
import { HarnessError } from './caller-transport.js';
import type { CallerTurnKind } from './measure-turns.js';

/**
 * Scripted conversations (JSON). A script is a list of caller turns:
 *   speech        waits for the assistant to finish (and for the reply it owes), then
 *                 `pauseBeforeMs`, then plays `audio` with silence inserted at `pauses`;
 *   backchannel   plays `afterReplyOnsetMs` after the assistant's current reply began ("uh-huh");
 *   interruption  the same timing, but meant to stop the assistant (a barge-in).
 * `assistantSpeaksFirst` makes the first turn wait for the assistant's first message.
 */
export interface ScriptTurn {
  kind: CallerTurnKind;
  /** A WAV file (16-bit PCM or G.711, mono), relative to the script's folder. */
  audio: string;
  pauseBeforeMs: number;
  afterReplyOnsetMs: number;
  /** Silence inserted into the audio: at `atMs` of the WAV, for `durationMs`. */
  pauses: { atMs: number; durationMs: number }[];
}

export interface ConversationScript {
  name: string;
  assistantSpeaksFirst: boolean;
  turns: ScriptTurn[];
}

/** A turn with its audio ready to send at the call's rate. */
export interface LoadedTurn extends ScriptTurn {
  samples: Int16Array;
}

export interface LoadedScript {
  name: string;
  assistantSpeaksFirst: boolean;
  turns: LoadedTurn[];
}

const MAX_TURNS = 200;
const MAX_DELAY_MS = 60_000;
const MAX_AUDIO_MS = 60_000;
const MAX_SCRIPT_BYTES = 1_000_000;
const KINDS: readonly CallerTurnKind[] = ['speech', 'backchannel', 'interruption'];

/** Validates a parsed script; every problem is listed in one ERR_BENCH_SCRIPT error. */
export function parseScript(value: unknown, source = 'script'): ConversationScript {
  const problems: string[] = [];
  const bad = (message: string): void => {
    problems.push(message);
  };
  if (!isObject(value)) {
    throw new HarnessError('ERR_BENCH_SCRIPT', `${source}: must be a JSON object`);
  }
  for (const key of Object.keys(value)) {
    if (!['name', 'description', 'assistantSpeaksFirst', 'turns'].includes(key)) {
      bad(`unknown field "${key}"`);
    }
  }
  const name = typeof value.name === 'string' && value.name.length <= 100 ? value.name : '';
  if (name === '') {
    bad('name must be a string of 1–100 characters');
  }
  if (value.assistantSpeaksFirst !== undefined && typeof value.assistantSpeaksFirst !== 'boolean') {
    bad('assistantSpeaksFirst must be a boolean');
  }
  const turns: ScriptTurn[] = [];
  if (!Array.isArray(value.turns) || value.turns.length === 0 || value.turns.length > MAX_TURNS) {
    bad(`turns must be a list of 1–${MAX_TURNS} turns`);
  } else {
    value.turns.forEach((raw: unknown, index) => {
      const turn = parseTurn(raw, `turns[${index}]`, bad);
      if (turn !== null) {
        turns.push(turn);
      }
    });
  }
  if (problems.length > 0) {
    throw new HarnessError('ERR_BENCH_SCRIPT', `${source}: ${problems.join('; ')}`);
  }
  return { name, assistantSpeaksFirst: value.assistantSpeaksFirst === true, turns };
}

function parseTurn(raw: unknown, at: string, bad: (m: string) => void): ScriptTurn | null {
  if (!isObject(raw)) {
    bad(`${at} must be an object`);
    return null;
  }
  for (const key of Object.keys(raw)) {
    if (!['kind', 'audio', 'pauseBeforeMs', 'afterReplyOnsetMs', 'pauses'].includes(key)) {
      bad(`${at}: unknown field "${key}"`);
    }
  }
  const kind = raw.kind as CallerTurnKind;
  if (!KINDS.includes(kind)) {
    bad(`${at}.kind must be one of ${KINDS.join(', ')}`);
  }
  const audio = raw.audio;
  if (typeof audio !== 'string' || audio === '' || audio.length > 200 || isAbsolute(audio)) {
    bad(`${at}.audio must be a relative path to a WAV file`);
  } else if (audio.split(/[\\/]/).includes('..')) {
    bad(`${at}.audio must stay inside the script's folder`);
  }
  const delay = (field: 'pauseBeforeMs' | 'afterReplyOnsetMs', fallback: number): number => {
    const v = raw[field] ?? fallback;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > MAX_DELAY_MS) {
      bad(`${at}.${field} must be a number of ms from 0 to ${MAX_DELAY_MS}`);
      return fallback;
    }
    return v;
  };
  const pauses: ScriptTurn['pauses'] = [];
  if (raw.pauses !== undefined) {
    if (!Array.isArray(raw.pauses) || raw.pauses.length > 20) {
      bad(`${at}.pauses must be a list of at most 20 pauses`);
    } else {
      raw.pauses.forEach((p: unknown, i) => {
        const ok =
          isObject(p) &&
          Object.keys(p).every((k) => k === 'atMs' || k === 'durationMs') &&
          [p.atMs, p.durationMs].every(
            (n) => typeof n === 'number' && Number.isFinite(n) && n >= 0 && n <= MAX_DELAY_MS,
          );
        if (ok) {
          pauses.push({ atMs: p.atMs as number, durationMs: p.durationMs as number });
        } else {
          bad(`${at}.pauses[${i}] must be {atMs, durationMs} in ms from 0 to ${MAX_DELAY_MS}`);
        }
      });
    }
  }
  pauses.sort((a, b) => a.atMs - b.atMs);
  return {
    kind,
    audio: typeof audio === 'string' ? audio : '',
    pauseBeforeMs: delay('pauseBeforeMs', 500),
    afterReplyOnsetMs: delay('afterReplyOnsetMs', 1000),
    pauses,
  };
}

/**
 * Reads a script file and its WAVs, converted to mono PCM16 at `sampleRateHz`, each turn's audio
 * padded with silence to whole frames of `frameMs`.
 */
export async function loadScript(
  path: string,
  sampleRateHz: number,
  frameMs = 20,
): Promise<LoadedScript> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new HarnessError('ERR_BENCH_SCRIPT', `cannot read script ${path}`, { cause: error });
  }
  if (text.length > MAX_SCRIPT_BYTES) {
    throw new HarnessError('ERR_BENCH_SCRIPT', `${path}: larger than ${MAX_SCRIPT_BYTES} bytes`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new HarnessError('ERR_BENCH_SCRIPT', `${path}: not valid JSON`, { cause: error });
  }
  const script = parseScript(json, path);
  const folder = dirname(path);
  const cache = new Map<string, Int16Array>();
  const turns: LoadedTurn[] = [];
  for (const turn of script.turns) {
    let audio = cache.get(turn.audio);
    if (audio === undefined) {
      audio = await loadWavMono(resolve(folder, turn.audio), sampleRateHz);
      cache.set(turn.audio, audio);
    }
    const frameSamples = Math.round((frameMs * sampleRateHz) / 1000);
    turns.push({
      ...turn,
      samples: padToFrames(withPauses(audio, turn.pauses, sampleRateHz), frameSamples),
    });
  }
  return { name: script.name, assistantSpeaksFirst: script.assistantSpeaksFirst, turns };
}

async function loadWavMono(path: string, sampleRateHz: number): Promise<Int16Array> {
  let wav;
  try {
    wav = readWav(await readFile(path));
  } catch (error) {
    throw new HarnessError('ERR_BENCH_SCRIPT', `cannot use ${path}: ${String(error)}`, {
      cause: error,
    });
  }
  if (wav.channelCount !== 1) {
    throw new HarnessError('ERR_BENCH_SCRIPT', `${path}: must be mono`);
  }
  if (wav.durationMs > MAX_AUDIO_MS) {
    throw new HarnessError('ERR_BENCH_SCRIPT', `${path}: longer than ${MAX_AUDIO_MS} ms`);
  }
  if (wav.sampleRateHz === sampleRateHz) {
    return wav.samples;
  }
  if (!isResamplerRate(wav.sampleRateHz) || !isResamplerRate(sampleRateHz)) {
    throw new HarnessError(
      'ERR_BENCH_SCRIPT',
      `${path}: cannot convert ${wav.sampleRateHz} Hz to ${sampleRateHz} Hz (8000–48000 only)`,
    );
  }
  const resampler = new Resampler({ inputRateHz: wav.sampleRateHz, outputRateHz: sampleRateHz });
  const out = new Int16Array(resampler.maxOutputLength(wav.samples.length));
  const written = resampler.process(wav.samples, out);
  return out.subarray(0, written);
}

/** The audio with silence inserted at each pause (times in the original audio). */
export function withPauses(
  audio: Int16Array,
  pauses: readonly { atMs: number; durationMs: number }[],
  sampleRateHz: number,
): Int16Array {
  if (pauses.length === 0) {
    return audio;
  }
  const toSamples = (ms: number): number => Math.round((ms * sampleRateHz) / 1000);
  const total = audio.length + pauses.reduce((sum, p) => sum + toSamples(p.durationMs), 0);
  const out = new Int16Array(total);
  let read = 0;
  let write = 0;
  for (const pause of pauses) {
    const at = Math.min(audio.length, toSamples(pause.atMs));
    out.set(audio.subarray(read, at), write);
    write += at - read + toSamples(pause.durationMs);
    read = at;
  }
  out.set(audio.subarray(read), write);
  return out;
}

function padToFrames(audio: Int16Array, frameSamples: number): Int16Array {
  const remainder = audio.length % frameSamples;
  if (remainder === 0) {
    return audio;
  }
  const out = new Int16Array(audio.length + frameSamples - remainder);
  out.set(audio);
  return out;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
