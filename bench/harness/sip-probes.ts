import { RealClock } from './clock.js';
import type { RunResult } from './runner.js';
import { runCalls } from './runner.js';
import type { LoadedScript } from './script.js';
import type { SelfParla } from './self-parla.js';
import { replyDurationMs } from './self-vendors.js';
import {
  SIP_SAMPLE_RATE_HZ,
  sipTransportFactory,
  type SipCallerTransport,
} from './sip-transport.js';

/**
 * The probe calls of `npm run bench -- sip-load`: the harness's scripted SIP callers (each with a
 * caller number of its own, 1 s apart) on a `--self` Parla, measured as the latency bench
 * measures them. `transports` receives each call's SIP transport (its RTP arrival statistics);
 * `onRunning` the number of probe calls under way, as it changes.
 */
export function runSipProbes(
  parla: SelfParla,
  options: { scripts: readonly LoadedScript[]; calls: number },
  transports: SipCallerTransport[],
  onRunning: (running: number) => void,
): Promise<RunResult> {
  const factory = sipTransportFactory({
    target: `${parla.sip.host}:${parla.sip.port}`,
    number: parla.sip.number,
    api: { baseUrl: parla.url, apiKey: parla.apiKey, phoneNumberId: parla.phoneNumberId },
  });
  return runCalls({
    clock: new RealClock(),
    transport: (index) => {
      const transport = factory(index) as SipCallerTransport;
      transports[index] = transport;
      return transport;
    },
    scripts: options.scripts,
    calls: options.calls,
    staggerMs: 1000,
    measure: {
      expectedLatencyMs: parla.expectedMs,
      expectedReplyMs: replyDurationMs(SIP_SAMPLE_RATE_HZ),
    },
    onProgress: (p) => onRunning(p.callsRunning),
    progressIntervalMs: 250,
  });
}
