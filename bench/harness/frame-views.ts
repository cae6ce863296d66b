/**
 * Frame views of each turn's audio, made once and shared by every call playing it, so sending a
 * frame allocates nothing (and a transport may cache per-frame buffers keyed on the view).
 */
const frameCache = new WeakMap<Int16Array, Int16Array[]>();

export function framesOf(audio: Int16Array, frameSamples: number): Int16Array[] {
  let frames = frameCache.get(audio);
  if (frames === undefined || frames[0]?.length !== frameSamples) {
    frames = [];
    for (let at = 0; at < audio.length; at += frameSamples) {
      const frame = audio.subarray(at, at + frameSamples);
      if (frame.length < frameSamples) {
        // A turn not padded to whole frames (loadScript pads): finish it with silence.
        const padded = new Int16Array(frameSamples);
        padded.set(frame);
        frames.push(padded);
      } else {
        frames.push(frame);
      }
    }
    frameCache.set(audio, frames);
  }
  return frames;
}
