/** Opus encode and decode of one 20 ms frame (libopus via @discordjs/opus).  npx tsx bench/media/opus-codec.bench.ts */
import { bench, do_not_optimize } from 'mitata';
import { OpusCodec, type OpusSampleRateHz } from '../../src/media/codecs/opus-codec.js';
import { runFrameBenchmarks } from './report.js';

for (const rate of [16000, 48000] as OpusSampleRateHz[]) {
  const codec = new OpusCodec({ sampleRateHz: rate, bitrateBps: 32000 });
  const frame = Int16Array.from({ length: codec.frameSamples }, (_, i) =>
    Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate) + 500 * Math.sin(i * 1.7)),
  );
  const packet = codec.encode(frame);
  const decoded = new Int16Array(codec.frameSamples);
  bench(`Opus encode, ${rate} Hz mono, 32 kbit/s`, () => do_not_optimize(codec.encode(frame)));
  bench(`Opus decode, ${rate} Hz mono, 32 kbit/s`, () =>
    do_not_optimize(codec.decode(packet, decoded)),
  );
}

await runFrameBenchmarks('Opus codec');
