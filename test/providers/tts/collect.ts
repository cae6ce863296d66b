/** All chunks of a synthesis, as the bytes they hold (little-endian host). */
export async function collectBytes(stream: AsyncIterable<Int16Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const chunk of stream) {
    parts.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  }
  return Buffer.concat(parts);
}

/** What a promise rejected with (fails when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}
