import type { Socket } from 'node:dgram';
import type { TimerHandle, TimerScheduler } from '../sip/timers.js';
import { rtcpIntervalMs, serializeRtcpCompound } from './rtcp-packet.js';
import type { RtcpReporter, RtcpSenderState } from './rtcp-reporter.js';
import type { RtpSessionStats } from './rtp-session-stats.js';
import type { RtpEndpoint } from './rtp-source-latch.js';

/** G.711 at 20 ms: 160 payload + 12 RTP + 8 UDP + 20 IP bytes, 50 times a second. */
const SESSION_BANDWIDTH_BYTES_PER_S = 200 * 50;

export interface RtcpSendLoopOptions {
  readonly socket: Socket;
  readonly reporter: RtcpReporter;
  readonly stats: RtpSessionStats;
  readonly scheduler: TimerScheduler;
  readonly random: () => number;
  readonly now: () => number;
  readonly wallClockMs: () => number;
  /**
   * Our stream now. Its RTP timestamp is the sender's, in the codec's own clock (8000 for G.711
   * and G.722, 48000 for Opus), so SRs map wall clock onto the right timeline.
   */
  readonly senderState: () => RtcpSenderState;
  /** Where reports go, or undefined while the peer's address is unknown. */
  readonly target: () => RtpEndpoint | undefined;
}

/** An RTP session's RTCP reports at the RFC 3550 §6.3 interval, and its BYE. */
export class RtcpSendLoop {
  private timer: TimerHandle | undefined;
  private stopped = false;

  constructor(private readonly options: RtcpSendLoopOptions) {
    this.schedule(true);
  }

  /** Sends a report (and a BYE); resolves once the socket has taken it, never rejects. */
  send(bye?: { reason?: string }): Promise<void> {
    const { options } = this;
    const target = options.target();
    if (target === undefined) {
      return Promise.resolve();
    }
    const packets = options.reporter.build(
      options.senderState(),
      options.now(),
      options.wallClockMs(),
      bye,
    );
    options.stats.rtcpSent++;
    return new Promise((resolve) => {
      options.socket.send(serializeRtcpCompound(packets), target.port, target.address, (error) => {
        if (error) {
          options.stats.socketErrors++;
        }
        resolve();
      });
    });
  }

  /** No more scheduled reports (a last one may still go through send()). */
  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) {
      this.options.scheduler.clear(this.timer);
      this.timer = undefined;
    }
  }

  private schedule(initial: boolean): void {
    const delayMs = rtcpIntervalMs({
      members: 2,
      senders: 2,
      weSent: this.options.stats.packetsSent > 0,
      averageRtcpSizeBytes: 100,
      sessionBandwidthBytesPerS: SESSION_BANDWIDTH_BYTES_PER_S,
      initial,
      random: this.options.random,
    });
    this.timer = this.options.scheduler.set(delayMs, () => {
      this.timer = undefined;
      if (this.stopped) {
        return;
      }
      void this.send();
      this.schedule(false);
    });
  }
}
