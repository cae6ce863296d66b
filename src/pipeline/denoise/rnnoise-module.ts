import RNNoise, { type RnnoiseWasmModule } from '@echogarden/rnnoise-wasm';

export type { RnnoiseWasmModule };

/** Samples in one RNNoise frame: 10 ms at 48 kHz. */
export const RNNOISE_FRAME_SAMPLES = 480;
export const RNNOISE_RATE_HZ = 48000;
/** RNNoise's own delay: its output is its input of one frame earlier (measured with an impulse). */
export const RNNOISE_DELAY_SAMPLES = RNNOISE_FRAME_SAMPLES;

let shared: Promise<RnnoiseWasmModule> | undefined;

/**
 * The RNNoise WASM module of this thread, compiled and instantiated on first use and shared by
 * every denoiser on the thread (module state is per worker thread, so each worker gets its own).
 * The package locates rnnoise.wasm next to its rnnoise.js through import.meta.url, which works
 * from node_modules in Node. A failed load is not cached: the next call tries again.
 */
export function loadRnnoiseModule(): Promise<RnnoiseWasmModule> {
  if (shared === undefined) {
    const loading = RNNoise().then((module) => {
      const frame = module._rnnoise_get_frame_size();
      if (frame !== RNNOISE_FRAME_SAMPLES) {
        throw new Error(`RNNoise frame size is ${frame}, expected ${RNNOISE_FRAME_SAMPLES}`);
      }
      return module;
    });
    shared = loading;
    loading.catch(() => {
      if (shared === loading) {
        shared = undefined;
      }
    });
  }
  return shared;
}
