/**
 * Radix-2 FFT of a real sequence of power-of-two length N, computed as a complex FFT of length
 * N/2 over the even/odd sample pairs followed by a split step. Twiddle factors and the
 * bit-reversal permutation are tabled at construction; forward() and inverse() allocate nothing.
 *
 * Conventions: X[k] = Σ x[n]·e^(−2πi·kn/N) for k = 0 … N/2 (the other half is the conjugate
 * mirror), and inverse() divides by N, so inverse(forward(x)) = x up to rounding.
 */
export class RealFft {
  readonly size: number;
  /** Bins in a half spectrum: size / 2 + 1. */
  readonly binCount: number;
  private readonly half: number;
  private readonly bitReverse: Uint32Array;
  /** cos/sin(2π·j / half) for j < half / 2: the complex FFT's twiddles. */
  private readonly cosTable: Float64Array;
  private readonly sinTable: Float64Array;
  /** cos/sin(2π·k / size) for k ≤ half: the split step's twiddles. */
  private readonly splitCos: Float64Array;
  private readonly splitSin: Float64Array;
  private readonly zRe: Float64Array;
  private readonly zIm: Float64Array;

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 4 || (size & (size - 1)) !== 0) {
      throw new RangeError(`FFT size must be a power of two of at least 4, got ${size}`);
    }
    this.size = size;
    this.half = size / 2;
    this.binCount = this.half + 1;
    const half = this.half;
    const bits = Math.log2(half);
    this.bitReverse = new Uint32Array(half);
    for (let i = 0; i < half; i++) {
      let reversed = 0;
      for (let b = 0; b < bits; b++) {
        reversed |= ((i >>> b) & 1) << (bits - 1 - b);
      }
      this.bitReverse[i] = reversed;
    }
    const quarter = Math.max(1, half / 2);
    this.cosTable = new Float64Array(quarter);
    this.sinTable = new Float64Array(quarter);
    for (let j = 0; j < quarter; j++) {
      this.cosTable[j] = Math.cos((2 * Math.PI * j) / half);
      this.sinTable[j] = Math.sin((2 * Math.PI * j) / half);
    }
    this.splitCos = new Float64Array(half + 1);
    this.splitSin = new Float64Array(half + 1);
    for (let k = 0; k <= half; k++) {
      this.splitCos[k] = Math.cos((2 * Math.PI * k) / size);
      this.splitSin[k] = Math.sin((2 * Math.PI * k) / size);
    }
    this.zRe = new Float64Array(half);
    this.zIm = new Float64Array(half);
  }

  /** Half spectrum of input[0 … size) into re/im[0 … binCount). */
  forward(input: Float64Array, re: Float64Array, im: Float64Array): void {
    const half = this.half;
    const zRe = this.zRe;
    const zIm = this.zIm;
    const rev = this.bitReverse;
    for (let n = 0; n < half; n++) {
      const j = rev[n]!;
      zRe[j] = input[2 * n]!;
      zIm[j] = input[2 * n + 1]!;
    }
    this.complexTransform(-1);
    re[0] = zRe[0]! + zIm[0]!;
    im[0] = 0;
    re[half] = zRe[0]! - zIm[0]!;
    im[half] = 0;
    const cos = this.splitCos;
    const sin = this.splitSin;
    for (let k = 1; k < half; k++) {
      const ar = zRe[k]!;
      const ai = zIm[k]!;
      const br = zRe[half - k]!;
      const bi = -zIm[half - k]!;
      // E = (Z[k] + conj Z[N/2−k]) / 2, O = (Z[k] − conj Z[N/2−k]) / 2i, X = E + W^k·O.
      const er = 0.5 * (ar + br);
      const ei = 0.5 * (ai + bi);
      const or = 0.5 * (ai - bi);
      const oi = -0.5 * (ar - br);
      const wr = cos[k]!;
      const wi = -sin[k]!;
      re[k] = er + wr * or - wi * oi;
      im[k] = ei + wr * oi + wi * or;
    }
  }

  /** Real sequence output[0 … size) from the half spectrum re/im[0 … binCount). */
  inverse(re: Float64Array, im: Float64Array, output: Float64Array): void {
    const half = this.half;
    const zRe = this.zRe;
    const zIm = this.zIm;
    const rev = this.bitReverse;
    const cos = this.splitCos;
    const sin = this.splitSin;
    for (let k = 0; k < half; k++) {
      const ar = re[k]!;
      const ai = im[k]!;
      const br = re[half - k]!;
      const bi = -im[half - k]!;
      // E = (X[k] + conj X[N/2−k]) / 2, O = (X[k] − conj X[N/2−k]) / (2·W^k), Z = E + i·O.
      const er = 0.5 * (ar + br);
      const ei = 0.5 * (ai + bi);
      const dr = 0.5 * (ar - br);
      const di = 0.5 * (ai - bi);
      const wr = cos[k]!;
      const wi = sin[k]!;
      const or = dr * wr - di * wi;
      const oi = dr * wi + di * wr;
      const j = rev[k]!;
      zRe[j] = er - oi;
      zIm[j] = ei + or;
    }
    this.complexTransform(1);
    const scale = 1 / half;
    for (let n = 0; n < half; n++) {
      output[2 * n] = zRe[n]! * scale;
      output[2 * n + 1] = zIm[n]! * scale;
    }
  }

  /** In-place iterative radix-2 FFT of the bit-reversed zRe/zIm; sign −1 forward, +1 inverse. */
  private complexTransform(sign: number): void {
    const half = this.half;
    const zRe = this.zRe;
    const zIm = this.zIm;
    const cos = this.cosTable;
    const sin = this.sinTable;
    for (let span = 2; span <= half; span *= 2) {
      const halfSpan = span / 2;
      const step = half / span;
      for (let k = 0; k < halfSpan; k++) {
        const wr = cos[k * step]!;
        const wi = sign * sin[k * step]!;
        for (let a = k; a < half; a += span) {
          const b = a + halfSpan;
          const xr = zRe[b]! * wr - zIm[b]! * wi;
          const xi = zRe[b]! * wi + zIm[b]! * wr;
          zRe[b] = zRe[a]! - xr;
          zIm[b] = zIm[a]! - xi;
          zRe[a] = zRe[a]! + xr;
          zIm[a] = zIm[a]! + xi;
        }
      }
    }
  }
}
