/** Chunking 20 ms of input into frames.  npx tsx bench/media/frame-chunker.bench.ts */
import { bench, do_not_optimize } from 'mitata';
import { FrameChunker } from '../../src/media/framing/frame-chunker.js';
import { runFrameBenchmarks } from './report.js';

let sink = 0;
const chunker = new FrameChunker({ sampleRateHz: 16000, frameDurationMs: 20 }, (frame) => {
  sink += frame.samples[0]!;
});
const samples = Int16Array.from({ length: 320 }, (_, i) => i * 97);
const bytes = new Uint8Array(640).map((_, i) => i * 31);

bench('chunker: 320 samples (Int16Array) in one push, 16 kHz', () =>
  do_not_optimize(chunker.pushSamples(samples)),
);
bench('chunker: 640 bytes (PCM16LE) in one push, 16 kHz', () =>
  do_not_optimize(chunker.pushBytes(bytes)),
);
bench('chunker: 640 bytes in pushes of 333 + 307 bytes, 16 kHz', () => {
  chunker.pushBytes(bytes, 0, 333);
  do_not_optimize(chunker.pushBytes(bytes, 333, 307));
});

await runFrameBenchmarks('Frame chunker');
do_not_optimize(sink);
