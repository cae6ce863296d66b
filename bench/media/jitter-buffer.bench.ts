/** One RTP packet in and one 20 ms frame out of the jitter buffer.  npx tsx bench/media/jitter-buffer.bench.ts */
import { bench, do_not_optimize } from 'mitata';
import { JitterBuffer } from '../../src/media/jitter/jitter-buffer.js';
import { runFrameBenchmarks } from './report.js';

function steadyStream(payloadFormat: 'pcmu' | 'l16', reorder: boolean) {
  const buffer = new JitterBuffer({
    payloadFormat,
    sampleRateHz: payloadFormat === 'l16' ? 16000 : 8000,
  });
  const samplesPerFrame = payloadFormat === 'l16' ? 320 : 160;
  const payload = new Uint8Array(payloadFormat === 'l16' ? 640 : 160).map((_, i) => i * 7);
  let n = 0;
  // Prime the buffer to its target delay.
  for (; n < 3; n++) {
    buffer.push(n & 0xffff, n * samplesPerFrame, payload, n * 20);
  }
  return () => {
    // With reordering, packets go in as 1 0 3 2 5 4 …: each pull still finds its frame.
    const seq = reorder ? n ^ 1 : n;
    buffer.push(seq & 0xffff, (seq * samplesPerFrame) >>> 0, payload, n * 20 + (n & 3));
    n++;
    return buffer.pull();
  };
}

const pcmu = steadyStream('pcmu', false);
const pcmuReordered = steadyStream('pcmu', true);
const l16 = steadyStream('l16', false);
bench('jitter buffer: push + pull, PCMU 8 kHz, in order', () => do_not_optimize(pcmu()));
bench('jitter buffer: push + pull, PCMU 8 kHz, pairs swapped', () =>
  do_not_optimize(pcmuReordered()),
);
bench('jitter buffer: push + pull, L16 16 kHz, in order', () => do_not_optimize(l16()));

await runFrameBenchmarks('Jitter buffer');
