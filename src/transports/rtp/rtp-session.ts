import type { Socket } from 'node:dgram';
import type { JitterBuffer, JitterBufferFrame } from '../../media/jitter/jitter-buffer.js';
import { SystemTimerScheduler, type TimerHandle, type TimerScheduler } from '../sip/timers.js';
import { parseRtcpCompound } from './rtcp-packet.js';
import { RtcpReporter } from './rtcp-reporter.js';
import { RtcpSendLoop } from './rtcp-send-loop.js';
import { rtpCodecProfile, type RtpCodecName, type RtpCodecProfile } from './rtp-codecs.js';
import { RtpPacketView, RTP_HEADER_BYTES, parseRtpPacket } from './rtp-packet.js';
import type { DtmfStep } from './dtmf-sender.js';
import { RtpSender } from './rtp-sender.js';
import type { RtpPortAllocator } from './rtp-port-allocator.js';
import { RtpReceiverStats } from './rtp-receiver-stats.js';
import { RtpAudioIn } from './rtp-audio-in.js';
import { RtpSourceLatch, type RtpEndpoint } from './rtp-source-latch.js';
import { newRtpSessionStats, type RtpSessionStats } from './rtp-session-stats.js';
import { TelephoneEventReceiver, type DtmfDigitEvent } from './telephone-event.js';
import { bindUdpSocket, closeUdpSocket } from './udp-socket.js';

export type { RtpSessionStats } from './rtp-session-stats.js';

export type { RtpCodecName } from './rtp-codecs.js';

export type { RtpEndpoint } from './rtp-source-latch.js';

/** Why the session gave up on the peer's media. */
export interface RtpInactivity {
  reason: 'rtp-timeout';
  /** Time since the last packet (or since the session started, when none came). */
  silentForMs: number;
  packetsReceived: number;
}

export interface RtpSessionOptions {
  readonly allocator: RtpPortAllocator;
  /** Local address to bind. Default 0.0.0.0. */
  readonly bindAddress?: string;
  /** The peer's RTP address from its SDP; may come later through setRemote(). */
  readonly remote?: RtpEndpoint;
  /** The codec; it sets the rate of the frames sent and pulled (sampleRateHz, frameSamples). */
  readonly codec: RtpCodecName;
  /** The negotiated payload type of the codec (0 PCMU, 8 PCMA, 9 G722 unless remapped). */
  readonly payloadType: number;
  /**
   * The negotiated telephone-event payload type; without it DTMF in and out is off. Its clock
   * is the codec's RTP clock (the SDP layer pairs telephone-event/8000 with G.711 and G.722,
   * telephone-event/48000 with Opus).
   */
  readonly telephoneEventPayloadType?: number;
  /** No RTP for this long ends the call (onInactive). Default 30 s. */
  readonly inactivityTimeoutMs?: number;
  /** Silence from the latched source after which another source may take over. Default 1 s. */
  readonly relatchAfterMs?: number;
  readonly jitterMinDelayMs?: number;
  readonly jitterMaxDelayMs?: number;
  /** Monotonic milliseconds. Default performance.now. */
  readonly now?: () => number;
  /** Wall-clock milliseconds since 1970, for RTCP NTP timestamps. Default Date.now. */
  readonly wallClockMs?: () => number;
  readonly scheduler?: TimerScheduler;
  readonly random?: () => number;
  readonly cname?: string;
  readonly onDtmf?: (event: DtmfDigitEvent) => void;
  readonly onInactive?: (inactivity: RtpInactivity) => void;
  /** The peer sent an RTCP BYE. */
  readonly onRemoteBye?: (reason: string | undefined) => void;
}

const INACTIVITY_CHECK_MS = 1000;
/** A DTMF event with no packets for this long is reported even without its end packets. */
const DTMF_FLUSH_MS = 1000;
const BIND_ATTEMPTS = 16;

/**
 * The media of one call: an RTP socket on an even port and RTCP on the next, audio out in
 * 20 ms frames, audio in through the jitter buffer, RFC 4733 DTMF both ways, symmetric RTP,
 * RTCP reports, an inactivity timeout, and counters. Sending is clocked by the caller: call
 * `sendFrame` every 20 ms (with silence when there is nothing to say); DTMF replaces the audio
 * of those ticks while a digit plays.
 *
 * Codecs (rtp-codecs.ts): G.711 at 8 kHz, G.722 and Opus at 16 kHz. Frames in and out are PCM16
 * at `sampleRateHz`, `frameSamples` long. G.711 is decoded as it arrives; G.722 and Opus, whose
 * decoders keep state, are decoded at playout in sequence order (jitter-slots.ts).
 */
export class RtpSession {
  readonly stats: RtpSessionStats = newRtpSessionStats();
  private readonly now: () => number;
  private readonly scheduler: TimerScheduler;
  private readonly view = new RtpPacketView();
  private readonly sender: RtpSender;
  private readonly outgoing = { buffer: new Uint8Array(0), length: 0 };
  private audioIn: RtpAudioIn;
  private readonly receiverStats: RtpReceiverStats;
  private readonly reporter: RtcpReporter;
  private dtmfIn: TelephoneEventReceiver;
  private profile: RtpCodecProfile;
  private payloadType: number;
  private eventPayloadType: number | undefined;
  private remote: RtpEndpoint | undefined;
  private remoteRtcp: RtpEndpoint | undefined;
  private readonly latch: RtpSourceLatch;
  private remoteSsrc = -1;
  private lastPacketMs: number;
  private lastEventPacketMs = 0;
  private receiving = true;
  private inactivityTimer: TimerHandle | undefined;
  private readonly rtcp: RtcpSendLoop;
  private closed = false;

  private constructor(
    private readonly options: RtpSessionOptions,
    private readonly rtpSocket: Socket,
    private readonly rtcpSocket: Socket,
    readonly localPort: number,
  ) {
    this.now = options.now ?? (() => performance.now());
    this.scheduler = options.scheduler ?? new SystemTimerScheduler();
    this.profile = rtpCodecProfile(options.codec);
    this.sender = new RtpSender(
      this.profile,
      options.payloadType,
      options.telephoneEventPayloadType,
    );
    this.payloadType = options.payloadType;
    this.eventPayloadType = options.telephoneEventPayloadType;
    this.audioIn = this.newAudioIn();
    this.receiverStats = new RtpReceiverStats(this.profile.clockRateHz);
    this.reporter = new RtcpReporter(
      options.cname ?? `parla-${this.sender.ssrc.toString(16)}`,
      this.receiverStats,
    );
    this.dtmfIn = this.newDtmfReceiver();
    this.remote = options.remote;
    this.latch = new RtpSourceLatch(options.relatchAfterMs ?? 1000);
    this.lastPacketMs = this.now();
    rtpSocket.on('message', (data, info) => this.receiveRtp(data, info.address, info.port));
    rtcpSocket.on('message', (data, info) => this.receiveRtcp(data, info.address, info.port));
    // ICMP port-unreachable and the like must not end the process or the call.
    rtpSocket.on('error', () => this.stats.socketErrors++);
    rtcpSocket.on('error', () => this.stats.socketErrors++);
    this.scheduleInactivityCheck();
    this.rtcp = new RtcpSendLoop({
      socket: rtcpSocket,
      reporter: this.reporter,
      stats: this.stats,
      scheduler: this.scheduler,
      random: options.random ?? Math.random,
      now: this.now,
      wallClockMs: options.wallClockMs ?? Date.now,
      senderState: () => ({
        ssrc: this.sender.ssrc,
        packetsSent: this.stats.packetsSent,
        payloadBytesSent: this.stats.payloadBytesSent,
        currentTimestamp: this.sender.timestamp,
      }),
      target: () => this.rtcpTarget(),
    });
  }

  /** Binds an even/odd port pair from the allocator and starts the session. */
  static async open(options: RtpSessionOptions): Promise<RtpSession> {
    rtpCodecProfile(options.codec); // a RangeError for a codec we do not run
    for (let attempt = 0; attempt < BIND_ATTEMPTS; attempt++) {
      const port = options.allocator.allocate();
      if (port === undefined) {
        break;
      }
      const address = options.bindAddress ?? '0.0.0.0';
      const rtp = await bindUdpSocket(address, port);
      const rtcp = rtp === undefined ? undefined : await bindUdpSocket(address, port + 1);
      if (rtp !== undefined && rtcp !== undefined) {
        return new RtpSession(options, rtp, rtcp, port);
      }
      rtp?.close();
      // Another process holds the pair. Round robin moves on to the next one; the allocator
      // may offer this one again on a later call, when it may be free.
      options.allocator.release(port);
    }
    throw Object.assign(new Error('no free RTP port pair in the configured range'), {
      code: 'RTP_NO_PORT',
    });
  }

  get codec(): RtpCodecName {
    return this.profile.name;
  }

  /** The rate of the frames sendFrame() takes and pullFrame() returns. */
  get sampleRateHz(): number {
    return this.profile.sampleRateHz;
  }

  /** Samples in one 20 ms frame at sampleRateHz. */
  get frameSamples(): number {
    return this.profile.frameSamples;
  }

  /** Our SSRC. */
  get ssrc(): number {
    return this.sender.ssrc;
  }

  get remoteEndpoint(): RtpEndpoint | undefined {
    return this.latch.latched ?? this.remote;
  }

  get isLatched(): boolean {
    return this.latch.latched !== undefined;
  }

  /** The jitter and loss figures of the incoming stream. */
  get receiveFigures(): { jitterMs: number; lost: number; expected: number } {
    return {
      jitterMs: this.receiverStats.jitterMs,
      lost: this.receiverStats.lost,
      expected: this.receiverStats.expected,
    };
  }

  get jitterBufferStats(): JitterBuffer['stats'] {
    return this.audioIn.jitter.stats;
  }

  /** The peer's RTP address from (new) SDP; RTCP goes to the next port unless given. */
  setRemote(remote: RtpEndpoint, rtcp?: RtpEndpoint): void {
    this.remote = remote;
    this.remoteRtcp = rtcp;
  }

  /**
   * After the answer or a re-INVITE chose the codec: starts a fresh jitter buffer and encoder.
   * `telephoneEventPayloadType` replaces the DTMF payload type when given. A codec of another
   * sampleRateHz changes the size of the frames sendFrame() takes: callers whose frame size is
   * fixed (SipCallMedia) keep to codecs of one rate (src/calls/sip-codecs.ts).
   */
  setCodec(codec: RtpCodecName, payloadType: number, telephoneEventPayloadType?: number): void {
    const profile = rtpCodecProfile(codec);
    const eventPt = telephoneEventPayloadType ?? this.eventPayloadType;
    if (profile === this.profile && payloadType === this.payloadType) {
      if (eventPt !== this.eventPayloadType) {
        this.eventPayloadType = eventPt;
        this.sender.setCodec(profile, payloadType, eventPt);
      }
      return;
    }
    const clockChanged = profile.clockRateHz !== this.profile.clockRateHz;
    this.profile = profile;
    this.payloadType = payloadType;
    this.eventPayloadType = eventPt;
    this.sender.setCodec(profile, payloadType, eventPt);
    this.audioIn = this.newAudioIn();
    if (clockChanged) {
      this.receiverStats.setClockRate(profile.clockRateHz);
      this.dtmfIn = this.newDtmfReceiver();
    }
  }

  /**
   * Whether we expect media from the peer (false before an answer, and while it holds the
   * call: sendonly from it, or inactive). The inactivity timeout only runs while receiving;
   * packets that come meanwhile latch the source but are not played (hold music, ringback).
   */
  setReceiving(receiving: boolean): void {
    this.receiving = receiving;
    this.lastPacketMs = this.now();
  }

  /** Marks the next audio frame as the start of a talkspurt (RTP marker bit). */
  markTalkspurt(): void {
    this.sender.markTalkspurt();
  }

  /** Queues an RFC 4733 digit; false when DTMF was not negotiated or the digit is not DTMF. */
  sendDtmf(digit: string, durationMs = 100): boolean {
    return this.sender.enqueueDigit(digit, durationMs);
  }

  /** Whether telephone-event was negotiated, so digits can go out as RFC 4733 events. */
  get canSendDtmf(): boolean {
    return this.sender.canSendDtmf;
  }

  /**
   * DTMF is going out: the frames given to sendFrame now are dropped (silence or events go
   * instead), so a caller that wants to hold its voice back rather than lose it waits.
   */
  get sendingDtmf(): boolean {
    return this.sender.sendingDtmf;
  }

  /**
   * Sends a parsed dial string (see dtmf-sender.ts) over the next ticks, the voice paused
   * meanwhile. Resolves true once the last step went out, false when telephone-event was not
   * negotiated or the session closed first.
   */
  sendDtmfSteps(steps: readonly DtmfStep[]): Promise<boolean> {
    if (this.closed) {
      return Promise.resolve(false);
    }
    return new Promise((resolve) => this.sender.enqueueDtmf(steps, resolve));
  }

  /** Sends one 20 ms frame of PCM16 at sampleRateHz (frameSamples), or the DTMF packet due. */
  sendFrame(samples: Int16Array): void {
    const frameSamples = this.profile.frameSamples;
    if (samples.length !== frameSamples) {
      throw new RangeError(`an RTP frame is ${frameSamples} samples, got ${samples.length}`);
    }
    const target = this.latch.latched ?? this.remote;
    const send = target !== undefined && !this.closed;
    const out = this.outgoing;
    if (this.sender.next(samples, send, out) === 'dtmf-start') {
      this.stats.dtmfSent++;
    }
    if (!send) {
      this.stats.framesNotSent++;
      return;
    }
    this.rtpSocket.send(out.buffer, 0, out.length, target.port, target.address);
    this.stats.packetsSent++;
    this.stats.payloadBytesSent += out.length - RTP_HEADER_BYTES;
  }

  /** The next 20 ms of the peer's audio as PCM16 at sampleRateHz (the object is reused). */
  pullFrame(): JitterBufferFrame {
    this.stats.framesPulled++;
    return this.audioIn.pull();
  }

  /** One datagram from the RTP socket. Public so tests can drive it without a network. */
  receiveRtp(data: Uint8Array, address: string, port: number): void {
    const stats = this.stats;
    stats.packetsReceived++;
    stats.bytesReceived += data.length;
    const view = this.view;
    const error = parseRtpPacket(data, view);
    if (error !== null) {
      stats.invalidPackets++;
      stats.lastInvalidCode = error;
      return;
    }
    const eventPt = this.eventPayloadType;
    const isEvent = eventPt !== undefined && view.payloadType === eventPt;
    if (!isEvent && view.payloadType !== this.payloadType) {
      stats.unexpectedPayloadType++;
      return;
    }
    const nowMs = this.now();
    if (!this.latch.accept(address, port, nowMs)) {
      stats.ignoredSourcePackets++;
      return;
    }
    stats.relatches = this.latch.relatches;
    if (view.ssrc !== this.remoteSsrc) {
      if (this.remoteSsrc !== -1) {
        stats.ssrcChanges++;
        this.audioIn.restartGrid();
        this.receiverStats.reset();
      }
      this.remoteSsrc = view.ssrc;
      this.reporter.setRemoteSsrc(view.ssrc);
    }
    this.lastPacketMs = nowMs;
    if (!this.receiving) {
      // Early media before an answer (ringback), or a peer that should not send (RFC 3264 §5.1):
      // the source is latched, but nothing reaches the caller's audio or keys.
      stats.ignoredWhileNotReceiving++;
      return;
    }
    this.receiverStats.update(view.sequenceNumber, view.timestamp, nowMs, !isEvent);
    if (isEvent) {
      this.lastEventPacketMs = nowMs;
      if (!this.dtmfIn.receive(view.timestamp, data, view.payloadOffset, view.payloadLength)) {
        stats.invalidPackets++;
        stats.lastInvalidCode = 'RTP_BAD_EVENT';
      }
      return;
    }
    stats.audioPacketsReceived++;
    if (!this.audioIn.push(view.timestamp, data, view.payloadOffset, view.payloadLength, nowMs)) {
      stats.invalidPackets++;
      stats.lastInvalidCode = 'RTP_OFF_FRAME_GRID';
    }
  }

  /** One datagram from the RTCP socket. */
  receiveRtcp(data: Uint8Array, address: string, port: number): void {
    const result = parseRtcpCompound(data);
    if (!result.ok) {
      this.stats.rtcpInvalid++;
      return;
    }
    // Once the RTP source is latched, RTCP (a BYE above all) is taken only from its host.
    const latched = this.latch.latched;
    if (latched !== undefined && latched.address !== address) {
      this.stats.ignoredSourcePackets++;
      return;
    }
    this.stats.rtcpReceived++;
    if (this.remoteRtcp?.address !== address || this.remoteRtcp.port !== port) {
      this.remoteRtcp = { address, port };
    }
    const hadBye = this.reporter.remoteBye;
    this.reporter.receive(result.packets, this.now(), this.sender.ssrc);
    if (!hadBye && this.reporter.remoteBye) {
      this.options.onRemoteBye?.(this.reporter.remoteByeReason);
    }
  }

  /** The report block the peer last sent about our stream, if any. */
  get remoteReport(): RtcpReporter['remoteReport'] {
    return this.reporter.remoteReport;
  }

  private scheduleInactivityCheck(): void {
    this.inactivityTimer = this.scheduler.set(INACTIVITY_CHECK_MS, () => {
      this.inactivityTimer = undefined;
      if (this.closed) {
        return;
      }
      const nowMs = this.now();
      if (this.lastEventPacketMs > 0 && nowMs - this.lastEventPacketMs >= DTMF_FLUSH_MS) {
        this.dtmfIn.flush();
      }
      const silentForMs = nowMs - this.lastPacketMs;
      if (this.receiving && silentForMs >= (this.options.inactivityTimeoutMs ?? 30_000)) {
        this.options.onInactive?.({
          reason: 'rtp-timeout',
          silentForMs,
          packetsReceived: this.stats.packetsReceived,
        });
        return; // reported once
      }
      this.scheduleInactivityCheck();
    });
  }

  private rtcpTarget(): RtpEndpoint | undefined {
    if (this.remoteRtcp !== undefined) {
      return this.remoteRtcp;
    }
    const rtp = this.latch.latched ?? this.remote;
    return rtp === undefined ? undefined : { address: rtp.address, port: rtp.port + 1 };
  }

  /** Sends an RTCP BYE, closes both sockets and returns the ports. Idempotent. */
  async close(reason?: string): Promise<void> {
    if (this.closed) {
      return;
    }
    this.closed = true;
    this.sender.cancelDtmf();
    // The BYE must leave before the socket closes (send completes asynchronously).
    this.rtcp.stop();
    await this.rtcp.send(reason === undefined ? {} : { reason });
    if (this.inactivityTimer !== undefined) {
      this.scheduler.clear(this.inactivityTimer);
    }
    await Promise.all([closeUdpSocket(this.rtpSocket), closeUdpSocket(this.rtcpSocket)]);
    this.options.allocator.release(this.localPort);
  }

  private newDtmfReceiver(): TelephoneEventReceiver {
    return new TelephoneEventReceiver(this.profile.clockRateHz, (event) => {
      this.stats.dtmfReceived++;
      this.options.onDtmf?.(event);
    });
  }

  private newAudioIn(): RtpAudioIn {
    return new RtpAudioIn(this.profile, {
      minDelayMs: this.options.jitterMinDelayMs,
      maxDelayMs: this.options.jitterMaxDelayMs,
    });
  }
}
