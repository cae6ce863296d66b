/** Types for the parts of @echogarden/rnnoise-wasm 0.2.0 (an Emscripten build) that Parla uses. */
declare module '@echogarden/rnnoise-wasm' {
  export interface RnnoiseWasmModule {
    /** The WASM heap as floats; replaced when the heap grows, so read it afresh after _malloc. */
    HEAPF32: Float32Array;
    HEAPU8: Uint8Array;
    _malloc(bytes: number): number;
    _free(pointer: number): void;
    /** Creates a denoiser state with the built-in model (pass 0); returns its pointer. */
    _rnnoise_create(model: number): number;
    _rnnoise_destroy(state: number): void;
    /** Re-initialises a state in place (model 0: the built-in one); returns 0 on success. */
    _rnnoise_init(state: number, model: number): number;
    /** 480 (10 ms at 48 kHz). */
    _rnnoise_get_frame_size(): number;
    /** Denoises 480 floats (int16 range) from `input` into `output` (may be equal); returns P(voice). */
    _rnnoise_process_frame(state: number, output: number, input: number): number;
  }
  /** Instantiates the module; it finds rnnoise.wasm next to rnnoise.js via import.meta.url. */
  export default function RNNoise(moduleArg?: Record<string, unknown>): Promise<RnnoiseWasmModule>;
}
