/**
 * Steady-state allocation check: runs each per-frame call a million times after a warm-up (Opus,
 * which allocates by design, 100 000 times) and reports the heap growth per call and the garbage
 * collections during the run. Takes about five minutes, most of it in the resamplers.
 * Short-lived garbage goes to the young generation and every few MB of it forces a scavenge, so
 * an allocation-free call shows ~0 bytes per call and no scavenges.
 * (Major GCs that V8's memory reducer schedules after the forced gc() are counted separately;
 * they are not caused by the loop.)
 *   npx tsx --expose-gc bench/media/allocation.ts [calls]
 */
import { PerformanceObserver, constants, performance } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { decodeMuLaw, encodeMuLaw } from '../../src/media/codecs/g711.js';
import { G722Decoder, G722Encoder } from '../../src/media/codecs/g722.js';
import { OpusCodec } from '../../src/media/codecs/opus-codec.js';
import { FrameChunker } from '../../src/media/framing/frame-chunker.js';
import { Int16RingBuffer } from '../../src/media/framing/ring-buffer.js';
import { JitterBuffer } from '../../src/media/jitter/jitter-buffer.js';
import { Resampler } from '../../src/media/resample/resampler.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) {
  console.error('run with --expose-gc: npx tsx --expose-gc bench/media/allocation.ts');
  process.exit(2);
}
const frames = Number(process.argv[2] ?? 1_000_000);
/** GC entries arrive asynchronously, so each is kept with its start time and counted later. */
const collections: { startTime: number; minor: boolean }[] = [];
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = (entry as { detail?: { kind?: number } }).detail?.kind;
    collections.push({
      startTime: entry.startTime,
      minor: kind === constants.NODE_PERFORMANCE_GC_MINOR,
    });
  }
});
observer.observe({ entryTypes: ['gc'] });
const checksum = new Float64Array(1);

function heapUsed(): number {
  return getHeapStatistics().used_heap_size;
}

async function measure(name: string, step: () => void, count = frames): Promise<void> {
  for (let i = 0; i < 50_000; i++) {
    step();
  }
  gc!();
  gc!();
  const start = performance.now();
  const before = heapUsed();
  for (let i = 0; i < count; i++) {
    step();
  }
  const after = heapUsed();
  const end = performance.now();
  await new Promise((resolve) => setTimeout(resolve, 50)); // let the gc entries arrive
  const during = collections.filter((c) => c.startTime >= start && c.startTime <= end);
  const scavenges = during.filter((c) => c.minor).length;
  const otherCollections = during.length - scavenges;
  const perCall = (after - before) / count;
  console.log(
    `| ${name} | ${count.toLocaleString('en')} | ${(after - before).toLocaleString('en')} | ` +
      `${perCall.toFixed(3)} | ${scavenges} | ${otherCollections} |`,
  );
}

console.log(
  '| per-frame call | calls | heap growth (bytes) | bytes per call | scavenges | other GCs |',
);
console.log('|---|---:|---:|---:|---:|---:|');

const pcm = Int16Array.from({ length: 160 }, (_, i) => Math.round(9000 * Math.sin(i / 3)));
const codes = new Uint8Array(160);
const decoded = new Int16Array(160);
await measure('G.711 µ-law encode + decode (160 samples)', () => {
  encodeMuLaw(pcm, codes);
  decodeMuLaw(codes, decoded);
});

const g722Encoder = new G722Encoder();
const g722Decoder = new G722Decoder();
const wideband = Int16Array.from({ length: 320 }, (_, i) => Math.round(9000 * Math.sin(i / 3)));
const g722Bytes = new Uint8Array(160);
const g722Decoded = new Int16Array(320);
await measure('G.722 encode + decode (320 samples)', () => {
  g722Encoder.encode(wideband, 0, 320, g722Bytes, 0);
  g722Decoder.decode(g722Bytes, 0, 160, g722Decoded, 0);
});

for (const [from, to] of [
  [48000, 16000],
  [8000, 16000],
] as const) {
  const resampler = new Resampler({ inputRateHz: from, outputRateHz: to });
  const input = Int16Array.from({ length: from / 50 }, (_, i) => (i * 37) % 20000);
  const output = new Int16Array(resampler.maxOutputLength(input.length));
  await measure(`Resampler ${from} → ${to} (20 ms)`, () => {
    resampler.process(input, output);
  });
}

const chunker = new FrameChunker({ sampleRateHz: 16000, frameDurationMs: 20 }, (frame) => {
  checksum[0] = checksum[0]! + frame.samples[1]!;
});
const bytes = new Uint8Array(640).map((_, i) => i);
await measure('FrameChunker.pushBytes (333 + 307 bytes)', () => {
  chunker.pushBytes(bytes, 0, 333);
  chunker.pushBytes(bytes, 333, 307);
});

const ring = new Int16RingBuffer(1000);
const block = new Int16Array(320);
await measure('Int16RingBuffer write + read (320 samples)', () => {
  ring.write(block);
  ring.read(block);
});

const jitter = new JitterBuffer({ payloadFormat: 'pcmu' });
let seq = 0;
for (; seq < 3; seq++) {
  jitter.push(seq, seq * 160, codes, seq * 20);
}
await measure('JitterBuffer push + pull (PCMU, 160 samples)', () => {
  const s = seq ^ 1; // pairs swapped
  jitter.push(s & 0xffff, (s * 160) >>> 0, codes, seq * 20 + (seq & 3));
  seq++;
  checksum[0] = checksum[0]! + jitter.pull().samples[5]!;
});

const opus = new OpusCodec({ sampleRateHz: 16000 });
const opusInput = new Int16Array(320);
const opusOutput = new Int16Array(320);
await measure(
  'OpusCodec encode + decode (20 ms, 16 kHz; not allocation-free)',
  () => {
    opus.decode(opus.encode(opusInput), opusOutput);
  },
  Math.min(frames, 100_000),
);

observer.disconnect();
console.log(`(checksum ${checksum[0]})`);
