import type { Store } from '../store/store.js';
import { RtpPortAllocator } from '../transports/rtp/rtp-port-allocator.js';
import { SipUserAgent } from '../transports/sip/sip-user-agent.js';
import type { SipTimerConfig } from '../transports/sip/timers.js';
import type { CallEngine } from './call-engine.js';
import type { CallParamsBuilder } from './call-params-builder.js';
import { SipInboundCalls } from './sip-inbound-calls.js';

export interface SipServerOptions {
  readonly store: Store;
  readonly engine: CallEngine;
  readonly builder: CallParamsBuilder;
  /** Address SIP and RTP bind to. */
  readonly host: string;
  /** SIP port (UDP and TCP); 0 picks a free one. */
  readonly sipPort: number;
  /** Address peers are told to reach us at (Via, Contact, SDP); default `host`. */
  readonly advertisedHost?: string;
  readonly rtpPortMin: number;
  readonly rtpPortMax: number;
  readonly rtpInactivityTimeoutMs?: number;
  readonly timers?: SipTimerConfig;
  /** Also listen on TCP. Default true. */
  readonly tcp?: boolean;
  readonly log: (error: unknown, message: string) => void;
}

/** The SIP side of Parla: the user agent on the SIP port and the inbound calls it routes. */
export class SipServer {
  private constructor(
    readonly agent: SipUserAgent,
    readonly calls: SipInboundCalls,
  ) {}

  static async start(options: SipServerOptions): Promise<SipServer> {
    const advertised =
      options.advertisedHost !== undefined && options.advertisedHost !== ''
        ? options.advertisedHost
        : options.host;
    if (advertised === '0.0.0.0' || advertised === '::') {
      // The SDP would tell callers to send their audio nowhere (or put the call on hold).
      throw Object.assign(
        new Error(
          `SIP binds ${options.host}: set PARLA_SIP_ADVERTISED_HOST to the address trunks reach this server at`,
        ),
        { code: 'ERR_CONFIG' },
      );
    }
    const calls = new SipInboundCalls({
      store: options.store,
      engine: options.engine,
      builder: options.builder,
      allocator: new RtpPortAllocator({ minPort: options.rtpPortMin, maxPort: options.rtpPortMax }),
      rtpBindAddress: options.host,
      mediaAddress: advertised,
      ...(options.rtpInactivityTimeoutMs !== undefined && {
        rtpInactivityTimeoutMs: options.rtpInactivityTimeoutMs,
      }),
      log: options.log,
    });
    const agent = await SipUserAgent.start({
      host: options.host,
      port: options.sipPort,
      advertisedHost: advertised,
      handler: calls,
      ...(options.tcp !== undefined && { tcp: options.tcp }),
      ...(options.timers !== undefined && { timers: options.timers }),
    });
    calls.attach(agent);
    return new SipServer(agent, calls);
  }

  get port(): number {
    return this.agent.port;
  }

  /** Stops taking SIP traffic; live calls are ended by the call engine's close first. */
  close(): Promise<void> {
    return this.agent.close();
  }
}
