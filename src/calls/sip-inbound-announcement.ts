/**
 * The error an assistant-request reply returns (`{error: "…"}`, api-behaviour.md §3.2), spoken to
 * the SIP caller: synthesized with the server's default voice (OpenAI `alloy`, with the org's
 * OpenAI credential, else the server's key) while the caller still hears ringing, then the call
 * is answered, the speech played over RTP every 20 ms, and hung up with a BYE. When no voice can
 * speak it (no key, a vendor error, too slow, no usable offer) the INVITE is declined 603 with
 * the text in a Reason header instead.
 *
 * However the caller leaves (CANCEL while the speech is made, BYE while it plays) the call ends
 * with the server's reason, `assistant-request-returned-error`: the server's reply ended the call.
 */
import { ParlaError } from '../core/errors.js';
import { Resampler } from '../media/resample/resampler.js';
import type { Store } from '../store/store.js';
import type { RtpPortAllocator } from '../transports/rtp/rtp-port-allocator.js';
import { RtpSession } from '../transports/rtp/rtp-session.js';
import type { SipDialog } from '../transports/sip/dialog.js';
import { PCMA, PCMU, answerOffer, type LocalAudio } from '../transports/sip/sdp-offer-answer.js';
import { serializeSdp } from '../transports/sip/sdp.js';
import type { IncomingInvite, SipUserAgent } from '../transports/sip/sip-user-agent.js';
import type { CallParamsBuilder } from './call-params-builder.js';
import type { InboundDecision } from './sip-inbound-decision.js';
import { sharedFramePacer, type FramePacer, type PacedStream } from './frame-pacer.js';
import { DEFAULT_VOICE } from './pipeline-call-options.js';
import { endStored, offerOf } from './sip-inbound-records.js';
import { codecName } from './sip-live-calls.js';
import { endpointFor, workerProviders } from './worker-providers.js';

/** The voice a call without `voice` gets (pipeline-call-options.ts): OpenAI `alloy`. */
export const ANNOUNCEMENT_VOICE = DEFAULT_VOICE;
/** The whole speech must have arrived by then, or the INVITE is declined instead. */
export const ANNOUNCEMENT_SYNTHESIS_DEADLINE_MS = 5000;
/** Speech beyond this is cut. */
export const ANNOUNCEMENT_MAX_AUDIO_MS = 30_000;

const RATE_HZ = 8000;
const FRAME_SAMPLES = 160;
/** Resampled this many vendor samples at a time, so any chunk size fits the output's slack. */
const RESAMPLE_PIECE_SAMPLES = 4800;
/** Silence before the speech (the far end's media path settles after our 200)… */
const LEAD_IN_FRAMES = 5;
/** …and after it, so a BYE does not cut what is still in the phone's jitter buffer. */
const TAIL_FRAMES = 10;

type Announce = Extract<InboundDecision, { action: 'announce' }>;

export interface AnnouncementSpeechInput {
  readonly builder: CallParamsBuilder;
  readonly orgId: string;
  readonly callId: string;
  readonly text: string;
  /** The caller cancelled. */
  readonly signal: AbortSignal;
  readonly deadlineMs?: number;
  readonly maxAudioMs?: number;
}

/**
 * `text` as 8 kHz PCM16 in the announcement voice, at most maxAudioMs long. Keys and endpoint are
 * found as a call's are (CallParamsBuilder, endpointFor), for an assistant whose only part is the
 * voice. Throws ERR_CONFIG without a key, ERR_PROVIDER_TIMEOUT past the deadline, the vendor's
 * ProviderError, or the signal's reason once cancelled.
 */
export async function synthesizeAnnouncement(input: AnnouncementSpeechInput): Promise<Int16Array> {
  const voiceConfig = ANNOUNCEMENT_VOICE;
  const params = await input.builder.build(
    input.orgId,
    { id: input.callId, assistant: { voice: voiceConfig } },
    RATE_HZ,
  );
  const endpoint = endpointFor(voiceConfig.provider, params);
  if (endpoint.apiKey === null) {
    throw new ParlaError(
      'ERR_CONFIG',
      'no OpenAI key to speak with: the org has no openai credential and the server no OPENAI_API_KEY',
    );
  }
  const voice = workerProviders(params.providers).voices.get(voiceConfig.provider)!;
  const vendorRateHz = voice.capabilities.sampleRatesHz[0]!;
  const resampler = new Resampler({ inputRateHz: vendorRateHz, outputRateHz: RATE_HZ });
  const deadlineMs = input.deadlineMs ?? ANNOUNCEMENT_SYNTHESIS_DEADLINE_MS;
  const maxSamples = Math.round(((input.maxAudioMs ?? ANNOUNCEMENT_MAX_AUDIO_MS) * RATE_HZ) / 1000);
  const out = new Int16Array(maxSamples + resampler.maxOutputLength(RESAMPLE_PIECE_SAMPLES));
  const deadline = AbortSignal.timeout(deadlineMs);
  const done = new AbortController();
  let length = 0;
  try {
    const stream = voice.synthesize(
      {
        text: input.text,
        sampleRateHz: vendorRateHz,
        config: voiceConfig,
        apiKey: endpoint.apiKey,
        ...(endpoint.baseUrl !== undefined && { baseUrl: endpoint.baseUrl }),
      },
      AbortSignal.any([input.signal, deadline, done.signal]),
    );
    for await (const chunk of stream) {
      for (let at = 0; at < chunk.length && length < maxSamples; at += RESAMPLE_PIECE_SAMPLES) {
        const count = Math.min(RESAMPLE_PIECE_SAMPLES, chunk.length - at);
        length += resampler.process(chunk, out, at, count, length);
      }
      if (length >= maxSamples) {
        break;
      }
    }
  } catch (error) {
    input.signal.throwIfAborted();
    if (deadline.aborted) {
      throw new ParlaError(
        'ERR_PROVIDER_TIMEOUT',
        `openai: the speech did not arrive within ${deadlineMs / 1000} s`,
        { cause: error },
      );
    }
    throw error;
  } finally {
    done.abort();
  }
  if (length === 0) {
    throw new ParlaError('ERR_PROVIDER', 'openai: the speech had no audio');
  }
  return out.subarray(0, Math.min(length, maxSamples));
}

export interface SipInboundAnnouncementsOptions {
  readonly store: Store;
  readonly builder: CallParamsBuilder;
  readonly allocator: RtpPortAllocator;
  readonly rtpBindAddress: string;
  /** Our SDP's audio for an RTP port (its codecs are narrowed to G.711 here). */
  readonly localAudio: (port: number) => LocalAudio;
  readonly synthesisDeadlineMs?: number;
  readonly maxAudioMs?: number;
  /** The 20 ms clock of the speech. Default the one all SIP media of the process share. */
  readonly pacer?: FramePacer;
  readonly log: (error: unknown, message: string) => void;
}

export interface AnnounceInput {
  readonly agent: SipUserAgent;
  readonly invite: IncomingInvite;
  /** Aborted by the caller's CANCEL. */
  readonly cancelled: AbortSignal;
  readonly orgId: string;
  readonly callId: string;
  readonly decision: Announce;
}

type PlaybackEnd = 'played' | 'hung-up' | 'closed';

/** One answered announcement: its RTP, the speech and how far it got. */
interface Playback {
  readonly rtp: RtpSession;
  readonly speech: Int16Array;
  readonly frame: Int16Array;
  readonly totalFrames: number;
  framesSent: number;
  paced?: PacedStream;
  finish: (end: PlaybackEnd) => void;
}

/** The inbound calls answered only to speak an assistant-request error, by dialog id. */
export class SipInboundAnnouncements {
  private readonly playing = new Map<string, Playback>();
  /** Answered announcements until their end is stored. */
  private readonly speaking = new Set<Promise<void>>();

  constructor(private readonly options: SipInboundAnnouncementsOptions) {}

  get size(): number {
    return this.playing.size;
  }

  /** Speaks the error and hangs up, or declines the INVITE; stores the call's end. */
  async announce(input: AnnounceInput): Promise<void> {
    const { store } = this.options;
    const { agent, invite, orgId, callId, decision, cancelled } = input;
    const { unspoken } = decision;
    const endNow = (): Promise<void> =>
      endStored(store, orgId, callId, unspoken.endedReason, unspoken.endedMessage);
    const offer = offerOf(invite.request);
    const local = (port: number): LocalAudio => ({
      ...this.options.localAudio(port),
      codecs: [PCMU, PCMA],
    });
    const probe = offer === undefined ? undefined : answerOffer(offer, local(0));
    let speech: Int16Array | undefined;
    let rtp: RtpSession | undefined;
    try {
      if (probe === undefined || !probe.ok) {
        throw new ParlaError('ERR_BAD_REQUEST', 'the INVITE carries no G.711 audio offer');
      }
      speech = await synthesizeAnnouncement({
        builder: this.options.builder,
        orgId,
        callId,
        text: decision.text,
        signal: cancelled,
        ...(this.options.synthesisDeadlineMs !== undefined && {
          deadlineMs: this.options.synthesisDeadlineMs,
        }),
        ...(this.options.maxAudioMs !== undefined && { maxAudioMs: this.options.maxAudioMs }),
      });
      const negotiated = probe.negotiated;
      rtp = await RtpSession.open({
        allocator: this.options.allocator,
        bindAddress: this.options.rtpBindAddress,
        remote: { address: negotiated.remoteAddress, port: negotiated.remotePort },
        codec: codecName(negotiated),
        payloadType: negotiated.payloadType,
      });
    } catch (error) {
      if (!cancelled.aborted) {
        this.options.log(error, 'assistant-request error not spoken; declined with 603');
        agent.dialogs.reject(invite, unspoken.status, [['Reason', unspoken.reason]]);
      }
      await endNow();
      return;
    }
    // The layer has answered a CANCEL 487 already.
    const answer = cancelled.aborted ? undefined : answerOffer(offer!, local(rtp.localPort));
    const dialog =
      answer?.ok === true && answer.answer !== undefined
        ? agent.dialogs.accept(invite, {
            body: Buffer.from(serializeSdp(answer.answer)),
            contentType: 'application/sdp',
          })
        : undefined;
    if (dialog === undefined) {
      // Cancelled, or the layer refused the INVITE itself (400, 422).
      await rtp.close();
      await endNow();
      return;
    }
    const speaking = this.speak(input, dialog, rtp, speech);
    this.speaking.add(speaking);
    await speaking;
    this.speaking.delete(speaking);
  }

  /** The caller hung up (BYE) or never ACKed: the speech stops. */
  onDialogEnded(dialog: SipDialog): void {
    this.playing.get(dialog.id)?.finish('hung-up');
  }

  /** Stops every announcement, hangs them up and stores their end (the server is closing). */
  async close(): Promise<void> {
    for (const playback of [...this.playing.values()]) {
      playback.finish('closed');
    }
    await Promise.all(this.speaking);
  }

  /** Plays the speech on the answered call, hangs up unless the caller did, stores the end. */
  private async speak(
    input: AnnounceInput,
    dialog: SipDialog,
    rtp: RtpSession,
    speech: Int16Array,
  ): Promise<void> {
    const { store } = this.options;
    const { orgId, callId, decision } = input;
    const startedAt = new Date().toISOString();
    const ended = this.play(dialog, rtp, speech);
    try {
      await store.resources.calls.update(orgId, callId, (current) => ({
        ...current,
        status: 'in-progress',
        startedAt,
      }));
      const end = await ended;
      if (end !== 'hung-up') {
        void input.agent.hangUp(dialog);
      }
      await store.resources.calls.update(orgId, callId, (current) => ({
        ...current,
        status: 'ended',
        endedReason: decision.unspoken.endedReason,
        endedMessage: decision.unspoken.endedMessage,
        startedAt,
        endedAt: new Date().toISOString(),
      }));
    } catch (error) {
      this.options.log(error, 'the end of a spoken assistant-request error was not stored');
    } finally {
      await rtp.close();
    }
  }

  /** Starts sending the speech; resolves when it is over, whichever way. */
  private play(dialog: SipDialog, rtp: RtpSession, speech: Int16Array): Promise<PlaybackEnd> {
    return new Promise((resolve) => {
      const playback: Playback = {
        rtp,
        speech,
        frame: new Int16Array(FRAME_SAMPLES),
        totalFrames: LEAD_IN_FRAMES + Math.ceil(speech.length / FRAME_SAMPLES) + TAIL_FRAMES,
        framesSent: 0,
        finish: (end) => {
          playback.paced?.stop();
          if (this.playing.get(dialog.id) === playback) {
            this.playing.delete(dialog.id);
            resolve(end);
          }
        },
      };
      this.playing.set(dialog.id, playback);
      // A stalled event loop delays the rest of the speech rather than skip it.
      playback.paced = (this.options.pacer ?? sharedFramePacer).add(() => {
        if (playback.framesSent >= playback.totalFrames) {
          playback.finish('played');
        } else {
          sendFrame(playback);
        }
      });
    });
  }
}

/** The next 20 ms: lead-in silence, speech (its last frame padded with silence), tail silence. */
function sendFrame(playback: Playback): void {
  const { frame, speech } = playback;
  const from = (playback.framesSent - LEAD_IN_FRAMES) * FRAME_SAMPLES;
  if (from === 0) {
    playback.rtp.markTalkspurt();
  }
  for (let i = 0; i < FRAME_SAMPLES; i++) {
    const at = from + i;
    frame[i] = at >= 0 && at < speech.length ? speech[at]! : 0;
  }
  playback.rtp.sendFrame(frame);
  playback.framesSent++;
}
