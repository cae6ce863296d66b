/**
 * A synthesised office ambience for `backgroundSound: "office"`: a low, slightly pink noise bed
 * (air conditioning, distant room tone) with sparse keyboard-like clicks in bursts of typing,
 * about −40 dBFS overall. Deterministic (a seeded xorshift generator), no audio files, and
 * allocation-free: mixInto() works sample by sample on numbers held by the instance.
 */

/** Noise-bed gain: Kellet's pink filter over uniform noise, scaled to about −41 dBFS RMS. */
const BED_GAIN = 185;
/** Peak of a click, in PCM16 units (about −22 dBFS). */
const CLICK_PEAK = 2600;
const CLICK_DECAY_MS = 1.5;
const CLICK_LENGTH_MS = 6;

export class OfficeAmbience {
  readonly sampleRateHz: number;
  #seed: number;
  #b0 = 0;
  #b1 = 0;
  #b2 = 0;
  #lowpass = 0;
  readonly #lowpassAlpha: number;
  readonly #clickDecay: number;
  readonly #clickSamples: number;
  /** Samples until the next click (or until the next burst, between bursts). */
  #untilNextClick: number;
  /** Clicks left in the current burst of typing. */
  #burstLeft = 0;
  #clickAge = -1;
  #clickAmplitude = 0;

  constructor(sampleRateHz: number, seed = 0x2f6b1a3d) {
    if (!Number.isInteger(sampleRateHz) || sampleRateHz < 8000 || sampleRateHz > 48000) {
      throw new RangeError(`sampleRateHz must be 8000–48000, got ${String(sampleRateHz)}`);
    }
    this.sampleRateHz = sampleRateHz;
    this.#seed = seed >>> 0 || 1;
    // A one-pole low-pass near 2.5 kHz keeps the bed dull, as room noise is.
    this.#lowpassAlpha = 1 - Math.exp((-2 * Math.PI * 2500) / sampleRateHz);
    this.#clickDecay = Math.exp(-1000 / (CLICK_DECAY_MS * sampleRateHz));
    this.#clickSamples = Math.round((CLICK_LENGTH_MS * sampleRateHz) / 1000);
    this.#untilNextClick = Math.round(sampleRateHz * 0.7);
  }

  /** Adds the next `out.length` samples of ambience to `out` (saturating). */
  mixInto(out: Int16Array): void {
    for (let i = 0; i < out.length; i++) {
      const v = out[i]! + this.#next();
      // Int16Array stores the value truncated towards zero.
      out[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
    }
  }

  /** Uniform in [−1, 1). */
  #white(): number {
    let x = this.#seed;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.#seed = x >>> 0;
    return this.#seed / 2147483648 - 1;
  }

  #next(): number {
    const white = this.#white();
    this.#b0 = 0.99765 * this.#b0 + white * 0.099046;
    this.#b1 = 0.963 * this.#b1 + white * 0.2965164;
    this.#b2 = 0.57 * this.#b2 + white * 1.0526913;
    const pink = this.#b0 + this.#b1 + this.#b2 + white * 0.1848;
    this.#lowpass += this.#lowpassAlpha * (pink - this.#lowpass);
    let sample = this.#lowpass * BED_GAIN;
    if (--this.#untilNextClick <= 0) {
      this.#startClick();
    }
    if (this.#clickAge >= 0) {
      sample += this.#clickAmplitude * white;
      this.#clickAmplitude *= this.#clickDecay;
      if (++this.#clickAge >= this.#clickSamples) {
        this.#clickAge = -1;
      }
    }
    return sample;
  }

  #startClick(): void {
    const rate = this.sampleRateHz;
    const r = (this.#white() + 1) / 2;
    this.#clickAge = 0;
    this.#clickAmplitude = CLICK_PEAK * (0.5 + 0.5 * r);
    if (this.#burstLeft > 0) {
      this.#burstLeft -= 1;
      // Keystrokes 90–250 ms apart.
      this.#untilNextClick = Math.round(rate * (0.09 + 0.16 * r));
    } else {
      // A pause of 1.5–6 s, then a burst of 3–14 keystrokes.
      this.#burstLeft = 3 + Math.floor(r * 12);
      this.#untilNextClick = Math.round(rate * (1.5 + 4.5 * ((this.#white() + 1) / 2)));
    }
  }
}
