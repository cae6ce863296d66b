import type { EndOfTurnDecision } from '../endpointing/endpointer.js';
import type { TurnMetrics } from '../metrics/turn-metrics.js';
import type { AssistantSpeaker } from './assistant-speaker.js';
import type { ConversationHistory } from './history.js';

/** A model reply answering the customer (or an added message). */
export const MODEL_REPLY = {
  text: null,
  isFirstMessage: false,
  interruptible: null,
  endCallReason: null,
} as const;

export interface TurnAnswerContext {
  readonly speaker: AssistantSpeaker;
  readonly history: ConversationHistory;
  readonly metrics: TurnMetrics;
  /** startSpeakingPlan.waitSeconds, in ms: no reply audio before the end of turn plus this. */
  readonly waitMs: number;
  conversationUpdate(): void;
}

/**
 * The customer's turn ended: their words enter the history and the model is asked to answer.
 * Over a message being said (or one that cannot be interrupted) the answer waits for it; a reply
 * nobody has heard yet is dropped and everything the customer said is answered at once.
 */
export function answerTurn(context: TurnAnswerContext, decision: EndOfTurnDecision): void {
  const { speaker, history } = context;
  let userText = decision.transcript;
  const previous = speaker.active;
  if (previous !== null && (previous.audible || !previous.interruptible)) {
    history.add('user', userText);
    context.conversationUpdate();
    speaker.speak({ ...MODEL_REPLY, userText });
    return;
  }
  if (previous !== null) {
    speaker.drop(previous);
    if (previous.userText !== '' && history.takeBackUser(previous.userText)) {
      userText = `${previous.userText} ${userText}`;
    }
  }
  context.metrics.markEndOfTurn(decision.endOfTurnAtMs);
  history.add('user', userText);
  context.conversationUpdate();
  const notBeforeMs = decision.endOfTurnAtMs + context.waitMs;
  speaker.speak({ ...MODEL_REPLY, notBeforeMs, userText }, true);
}
