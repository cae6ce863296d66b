/**
 * Throws a RangeError unless offset and length are integers that select a slice of an array of
 * `arrayLength` elements. For argument checks at the top of hot-path functions.
 */
export function checkRange(arrayLength: number, offset: number, length: number): void {
  if (
    !Number.isInteger(offset) ||
    !Number.isInteger(length) ||
    offset < 0 ||
    length < 0 ||
    offset + length > arrayLength
  ) {
    throw new RangeError(`range ${offset}+${length} is outside an array of ${arrayLength}`);
  }
}
