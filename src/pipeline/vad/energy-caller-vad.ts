import type { CallerVadFactory } from './caller-vad.js';
import { EnergyVad } from './energy-vad.js';

/**
 * The default caller VAD: the energy gate of energy-vad.ts, deciding each frame at once as
 * probability 1 (speech) or 0 (not speech) over the frame's own span.
 */
export const createEnergyCallerVad: CallerVadFactory = (sampleRateHz, onDecision) => {
  const vad = new EnergyVad({ sampleRateHz });
  let closed = false;
  return {
    push(samples: Int16Array, startMs: number): void {
      if (closed) {
        return;
      }
      const isSpeech = vad.process(samples);
      onDecision(isSpeech ? 1 : 0, startMs, startMs + (samples.length * 1000) / sampleRateHz);
    },
    close(): void {
      closed = true;
    },
  };
};
