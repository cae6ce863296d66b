import {
  AssistantReply,
  type ReplyFailure,
  type ReplyHost,
  type ReplySource,
} from './assistant-reply.js';

/** The assistant message in flight, as the call tracks it from generation to the end of playout. */
export interface ActiveReply {
  readonly reply: AssistantReply;
  readonly isFirstMessage: boolean;
  /** No audio goes out before this (waitSeconds after the end of turn). */
  readonly notBeforeMs: number;
  readonly startedAtMs: number;
  /** The customer's words this reply answers ('' for a first message). */
  readonly userText: string;
  /** All its audio is queued. */
  generated: boolean;
  /** Its first frame went out. */
  audible: boolean;
  hangSent: boolean;
}

export interface ActiveReplySpec {
  readonly turnId: number;
  readonly source: ReplySource;
  readonly isFirstMessage: boolean;
  readonly notBeforeMs: number;
  readonly startedAtMs: number;
  readonly userText: string;
}

/** Starts generating a reply; `onFailure` hears of a model or voice failure (not of an abort). */
export function startActiveReply(
  host: ReplyHost,
  spec: ActiveReplySpec,
  onFailure: (failure: ReplyFailure) => void,
): ActiveReply {
  const active: ActiveReply = {
    reply: new AssistantReply(host, spec.turnId, spec.source),
    isFirstMessage: spec.isFirstMessage,
    notBeforeMs: spec.notBeforeMs,
    startedAtMs: spec.startedAtMs,
    userText: spec.userText,
    generated: false,
    audible: false,
    hangSent: false,
  };
  void active.reply.run().then((failure) => {
    if (failure === null) {
      active.generated = true;
    } else {
      onFailure(failure);
    }
  });
  return active;
}
