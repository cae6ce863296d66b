/** G.722 encode and decode of one 20 ms frame at 16 kHz.  npx tsx bench/media/g722.bench.ts */
import { bench, do_not_optimize } from 'mitata';
import { G722Decoder, G722Encoder } from '../../src/media/codecs/g722.js';
import { runFrameBenchmarks } from './report.js';

/** Two tones, one in each sub-band, so that both ADPCM coders work. */
const pcm = Int16Array.from({ length: 320 }, (_, i) =>
  Math.round(
    9000 * Math.sin((2 * Math.PI * 440 * i) / 16000) +
      3000 * Math.sin((2 * Math.PI * 5500 * i) / 16000),
  ),
);
const encoder = new G722Encoder();
const decoder = new G722Decoder();
const bytes = new Uint8Array(160);
const decoded = new Int16Array(320);
encoder.encode(pcm, 0, 320, bytes, 0);

bench('G.722 encode, 320 samples', () => do_not_optimize(encoder.encode(pcm, 0, 320, bytes, 0)));
bench('G.722 decode, 160 bytes', () => do_not_optimize(decoder.decode(bytes, 0, 160, decoded, 0)));

await runFrameBenchmarks('G.722');
