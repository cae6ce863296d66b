/** Counters of one RTP session since it opened. A live object: read it, do not write it. */
export interface RtpSessionStats {
  /** Datagrams on the RTP socket, valid or not. */
  packetsReceived: number;
  bytesReceived: number;
  /** Audio packets accepted (after source and payload-type checks). */
  audioPacketsReceived: number;
  invalidPackets: number;
  /** The code of the last invalid packet (RTP_BAD_VERSION, …), or '' when none. */
  lastInvalidCode: string;
  /** Packets of a payload type that was not negotiated. */
  unexpectedPayloadType: number;
  /** RTP from another source than the latched one, and RTCP from another host. */
  ignoredSourcePackets: number;
  /** Packets from the latched source while no media was expected (before the answer, on hold). */
  ignoredWhileNotReceiving: number;
  /** Times the session moved to a new source after the latched one went quiet. */
  relatches: number;
  ssrcChanges: number;
  packetsSent: number;
  payloadBytesSent: number;
  /** Frames sendFrame() could not send (no remote address yet, or closed). */
  framesNotSent: number;
  framesPulled: number;
  dtmfReceived: number;
  dtmfSent: number;
  rtcpSent: number;
  rtcpReceived: number;
  rtcpInvalid: number;
  socketErrors: number;
}

export function newRtpSessionStats(): RtpSessionStats {
  return {
    packetsReceived: 0,
    bytesReceived: 0,
    audioPacketsReceived: 0,
    invalidPackets: 0,
    lastInvalidCode: '',
    unexpectedPayloadType: 0,
    ignoredSourcePackets: 0,
    ignoredWhileNotReceiving: 0,
    relatches: 0,
    ssrcChanges: 0,
    packetsSent: 0,
    payloadBytesSent: 0,
    framesNotSent: 0,
    framesPulled: 0,
    dtmfReceived: 0,
    dtmfSent: 0,
    rtcpSent: 0,
    rtcpReceived: 0,
    rtcpInvalid: 0,
    socketErrors: 0,
  };
}
