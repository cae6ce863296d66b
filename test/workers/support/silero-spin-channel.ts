/** BroadcastChannel on which silero-spin-handlers.ts announces each thread's first Silero run. */
export const SILERO_SPIN_CHANNEL = `parla-silero-spin-${process.pid}`;
