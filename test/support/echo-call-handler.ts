/**
 * A call handler for transport tests, loaded in the worker by file path (WorkerHost's
 * `handlerModule`). It receives PipelineCallParams like the real pipeline and behaves by
 * `assistant.metadata.echoMode`:
 * - `echo` (default): plays back the caller's audio, one 20 ms frame per tick;
 * - `tone`: a 440 Hz tone on every tick, whatever arrives;
 * - `flood`: a tone plus a 64 KiB `transcript` event on every tick (a slow client falls behind);
 * - `crash`: exits the worker thread 100 ms after the start.
 * Control messages come back as `control-received` events; `say` with content `interrupt`
 * emits `user-interrupted`, `tools` emits `tool-calls`; `tool-results` come back as
 * `tool-results-received`.
 */
import type { PipelineCallParams } from '../../src/calls/pipeline-call-params.js';
import type {
  CallHandler,
  CallHandlerContext,
  RegisterCallHandlers,
} from '../../src/workers/protocol.js';

export const ECHO_HANDLER = 'echo';

function echoMode(context: CallHandlerContext): string {
  const params = context.params as PipelineCallParams;
  const metadata = params.assistant.metadata as { echoMode?: string } | undefined;
  return metadata?.echoMode ?? 'echo';
}

function echo(context: CallHandlerContext): CallHandler {
  const mode = echoMode(context);
  // Up to 10 s of caller audio waits to be played back.
  const buffer = new Int16Array(context.sampleRateHz * 10);
  let readIndex = 0;
  let count = 0;
  let phase = 0;
  const step = (2 * Math.PI * 440) / context.sampleRateHz;
  const big = 'x'.repeat(64 * 1024);
  const emit = (type: string, fields: Record<string, unknown> = {}): void =>
    context.emit(type, { type, atMs: 0, ...fields });
  return {
    onStart: () => {
      emit('speech-update', { role: 'assistant', status: 'started', turn: 0 });
      if (mode === 'crash') {
        setTimeout(() => process.exit(1), 100);
      }
    },
    onAudio: (samples) => {
      for (let i = 0; i < samples.length && count < buffer.length; i++, count++) {
        buffer[(readIndex + count) % buffer.length] = samples[i]!;
      }
    },
    onTick: (_nowMs, out) => {
      if (mode === 'tone' || mode === 'flood') {
        for (let i = 0; i < out.length; i++) {
          out[i] = Math.round(Math.sin(phase) * 8000);
          phase += step;
        }
        if (mode === 'flood') {
          emit('transcript', { role: 'user', transcriptType: 'partial', transcript: big });
        }
        return out.length;
      }
      const n = Math.min(out.length, count);
      for (let i = 0; i < n; i++) {
        out[i] = buffer[readIndex]!;
        readIndex = (readIndex + 1) % buffer.length;
      }
      count -= n;
      return n;
    },
    onControl: (message) => {
      const m = message as { type?: string; content?: string; results?: unknown; turnId?: number };
      if (m.type === 'tool-results') {
        emit('tool-results-received', { results: m.results, turnId: m.turnId });
        return;
      }
      emit('control-received', { message });
      if (m.type === 'say' && m.content === 'interrupt') {
        emit('user-interrupted', { turnId: 1 });
      }
      if (m.type === 'say' && m.content === 'tools') {
        emit('tool-calls', {
          turnId: 2,
          toolCalls: [{ id: 'call-1', name: 'lookup', arguments: '{"order":42}' }],
        });
      }
    },
    onEnd: () => {},
  };
}

export const registerCallHandlers: RegisterCallHandlers = (register) => {
  register(ECHO_HANDLER, echo);
};
