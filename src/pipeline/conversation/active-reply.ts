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
  /** Whether the customer may interrupt it. */
  readonly interruptible: boolean;
  /** No audio goes out before this (waitSeconds after the end of turn). */
  readonly notBeforeMs: number;
  readonly startedAtMs: number;
  /** The customer's words this reply answers ('' for a first message). */
  readonly userText: string;
  /** The call ends with this reason once the reply has played (null: it goes on). */
  endCallReason: string | null;
  /** All its audio is queued. */
  generated: boolean;
  /** Its first frame went out. */
  audible: boolean;
  hangSent: boolean;
}

/** Something the assistant is to say when nothing else is being said. */
export interface Utterance {
  /** What to say; null: the model writes it from the history at the time it starts. */
  readonly text: string | null;
  /** For model utterances: a system instruction added to this request only. */
  readonly instruction?: string | undefined;
  readonly isFirstMessage: boolean;
  /** Null: interruptible unless it is the first message (firstMessageInterruptionsEnabled). */
  readonly interruptible: boolean | null;
  readonly endCallReason: string | null;
  /** No audio before this (default: at once). */
  readonly notBeforeMs?: number | undefined;
  /** The customer's words it answers. */
  readonly userText?: string | undefined;
}

export interface ActiveReplySpec {
  readonly turnId: number;
  readonly source: ReplySource;
  readonly isFirstMessage: boolean;
  readonly interruptible: boolean;
  readonly notBeforeMs: number;
  readonly startedAtMs: number;
  readonly userText: string;
  readonly endCallReason: string | null;
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
    interruptible: spec.interruptible,
    notBeforeMs: spec.notBeforeMs,
    startedAtMs: spec.startedAtMs,
    userText: spec.userText,
    endCallReason: spec.endCallReason,
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
