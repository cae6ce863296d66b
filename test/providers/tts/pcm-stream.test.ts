import { describe, expect, it } from 'vitest';
import { Pcm16Assembler } from '../../../src/providers/tts/pcm-stream.js';

function bytesOf(samples: Int16Array[]): number[] {
  return samples.flatMap((chunk) => [
    ...new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength),
  ]);
}

describe('Pcm16Assembler', () => {
  const source = Array.from({ length: 24 }, (_, i) => (i * 37 + 5) & 0xff);

  it('keeps every byte in place whatever the chunking', () => {
    for (const sizes of [[1], [3], [5, 2], [1, 1, 7], [24], [0, 1, 0, 3]]) {
      const assembler = new Pcm16Assembler();
      const out: Int16Array[] = [];
      for (let start = 0, i = 0; start < source.length; i++) {
        const size = sizes[i % sizes.length]!;
        out.push(assembler.push(Uint8Array.from(source.slice(start, start + size))));
        start += size;
      }
      expect(bytesOf(out)).toEqual(source);
      expect(assembler.pendingByte).toBe(false);
    }
  });

  it('decodes little-endian samples', () => {
    const assembler = new Pcm16Assembler();
    expect([...assembler.push(Uint8Array.from([0x01]))]).toEqual([]);
    expect([...assembler.push(Uint8Array.from([0x80, 0xff, 0x7f, 0x34]))]).toEqual([-32767, 32767]);
    expect(assembler.pendingByte).toBe(true);
  });
});
