/**
 * Call handlers for the worker tests, loaded in the worker thread by file path
 * (`handlerModule` start option) so tests need no src changes.
 */
import { BroadcastChannel } from 'node:worker_threads';
import type {
  CallHandler,
  CallHandlerContext,
  RegisterCallHandlers,
} from '../../../src/workers/protocol.js';

interface TestParams {
  frequencyHz?: number;
  durationMs?: number;
  afterMs?: number;
  stallMs?: number;
}

function paramsOf(context: CallHandlerContext): TestParams {
  return context.params ?? {};
}

const noop = (): void => {};

/** A sine tone; ends itself with `completed` after `durationMs` if given. */
function tone(context: CallHandlerContext): CallHandler {
  const { frequencyHz = 440, durationMs } = paramsOf(context);
  let phase = 0;
  let startMs = 0;
  const step = (2 * Math.PI * frequencyHz) / context.sampleRateHz;
  return {
    onStart: (nowMs) => {
      startMs = nowMs;
    },
    onAudio: noop,
    onTick: (nowMs, out) => {
      if (durationMs !== undefined && nowMs - startMs >= durationMs) {
        context.end('completed');
        return 0;
      }
      for (let i = 0; i < out.length; i += 1) {
        out[i] = Math.round(Math.sin(phase) * 8000);
        phase += step;
      }
      return out.length;
    },
    onControl: (message) => context.emit('control-echo', message),
    onEnd: noop,
  };
}

/** Plays back what it receives, one frame per tick. */
function echo(context: CallHandlerContext): CallHandler {
  const queue: Int16Array[] = [];
  return {
    onStart: noop,
    onAudio: (samples) => {
      queue.push(samples);
      context.emit('audio-in', samples.length);
    },
    onTick: (_nowMs, out) => {
      const next = queue.shift();
      if (next === undefined) {
        return 0;
      }
      out.set(next.subarray(0, out.length));
      return Math.min(next.length, out.length);
    },
    onControl: noop,
    onEnd: noop,
  };
}

/** Throws from onTick after `afterMs`. */
function throwOnTick(context: CallHandlerContext): CallHandler {
  const { afterMs = 60 } = paramsOf(context);
  let startMs = 0;
  return {
    ...tone(context),
    onStart: (nowMs) => {
      startMs = nowMs;
    },
    onTick: (nowMs) => {
      if (nowMs - startMs >= afterMs) {
        throw new Error('handler blew up');
      }
      return 0;
    },
  };
}

/** Exits the worker thread after `afterMs`. */
function exitThread(context: CallHandlerContext): CallHandler {
  const { afterMs = 60 } = paramsOf(context);
  return {
    ...tone(context),
    onStart: () => {
      setTimeout(() => process.exit(1), afterMs);
    },
  };
}

/** Throws an uncaught error in the worker thread after `afterMs`. */
function uncaughtError(context: CallHandlerContext): CallHandler {
  const { afterMs = 60 } = paramsOf(context);
  return {
    ...tone(context),
    onStart: () => {
      setTimeout(() => {
        throw new Error('uncaught in worker');
      }, afterMs);
    },
  };
}

/** Busy-loops the worker thread for `stallMs` after `afterMs`. */
function stall(context: CallHandlerContext): CallHandler {
  const { afterMs = 60, stallMs = 2000 } = paramsOf(context);
  return {
    ...tone(context),
    onStart: () => {
      setTimeout(() => {
        const until = Date.now() + stallMs;
        while (Date.now() < until) {
          // stall the event loop
        }
      }, afterMs);
    },
  };
}

/** Thread-wide: runs of the shared tick hook, and participant ticks seen before it ran. */
const hookFigures = { hookRuns: 0, ticksBeforeHook: 0, ticksSinceHook: 0 };
const countHook = (): void => {
  hookFigures.hookRuns += 1;
  hookFigures.ticksBeforeHook = hookFigures.ticksSinceHook;
  hookFigures.ticksSinceHook = 0;
};

/** Registers the shared per-tick hook (as a batched VAD would) and publishes its figures. */
function tickHook(context: CallHandlerContext): CallHandler {
  context.addTickHook(countHook);
  context.setThreadStats('tick-hook', () => ({ ...hookFigures }));
  return {
    ...tone(context),
    onTick: () => {
      hookFigures.ticksSinceHook += 1;
      return 0;
    },
  };
}

/** Registers a shutdown hook that reports on the BroadcastChannel named `params.channel`. */
function releaseProbe(context: CallHandlerContext): CallHandler {
  const { channel } = context.params as { channel: string };
  context.addShutdownHook(async () => {
    await new Promise((resolve) => setTimeout(resolve, 20));
    const out = new BroadcastChannel(channel);
    out.postMessage({ released: context.callId });
    out.close();
  });
  return tone(context);
}

/** Costs `buildMs` of busy CPU to construct (a pipeline's set-up), then plays a tone. */
function slowStart(context: CallHandlerContext): CallHandler {
  const { buildMs = 5 } = context.params as { buildMs?: number };
  const until = performance.now() + buildMs;
  while (performance.now() < until) {
    // construction work
  }
  return tone(context);
}

export const registerCallHandlers: RegisterCallHandlers = (register) => {
  register('release-probe', releaseProbe);
  register('slow-start', slowStart);
  register('tick-hook', tickHook);
  register('tone', tone);
  register('echo', echo);
  register('throw-on-tick', throwOnTick);
  register('exit-thread', exitThread);
  register('uncaught-error', uncaughtError);
  register('stall', stall);
};
