/** G.711 encode and decode of one 20 ms frame at 8 kHz.  npx tsx bench/media/g711.bench.ts */
import { bench, do_not_optimize } from 'mitata';
import { decodeALaw, decodeMuLaw, encodeALaw, encodeMuLaw } from '../../src/media/codecs/g711.js';
import { runFrameBenchmarks } from './report.js';

const pcm = Int16Array.from({ length: 160 }, (_, i) =>
  Math.round(12000 * Math.sin((2 * Math.PI * 440 * i) / 8000)),
);
const codes = new Uint8Array(160);
const decoded = new Int16Array(160);
encodeMuLaw(pcm, codes);

bench('G.711 µ-law encode, 160 samples', () => do_not_optimize(encodeMuLaw(pcm, codes)));
bench('G.711 µ-law decode, 160 samples', () => do_not_optimize(decodeMuLaw(codes, decoded)));
bench('G.711 A-law encode, 160 samples', () => do_not_optimize(encodeALaw(pcm, codes)));
bench('G.711 A-law decode, 160 samples', () => do_not_optimize(decodeALaw(codes, decoded)));

await runFrameBenchmarks('G.711');
