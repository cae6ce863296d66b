/*
 * Fixed vocabularies of the assistant plans, used both by the control plane (validation,
 * defaults) and by the pipeline (behaviour). They live here because neither layer may import
 * the other. Values from the shared reference "API behaviour", sections 2.2 and 2.4.
 */

/** stopSpeakingPlan.acknowledgementPhrases default: never interrupt. */
export const DEFAULT_ACKNOWLEDGEMENT_PHRASES: readonly string[] = Object.freeze([
  'i understand',
  'i see',
  'i got it',
  'i hear you',
  'im listening',
  'im with you',
  'right',
  'okay',
  'ok',
  'sure',
  'alright',
  'got it',
  'understood',
  'yeah',
  'yes',
  'uh-huh',
  'mm-hmm',
  'gotcha',
  'mhmm',
  'ah',
  'yeah okay',
  'yeah sure',
]);

/** stopSpeakingPlan.interruptionPhrases default: always interrupt. */
export const DEFAULT_INTERRUPTION_PHRASES: readonly string[] = Object.freeze([
  'stop',
  'shut',
  'up',
  'enough',
  'quiet',
  'silence',
  'but',
  'dont',
  'not',
  'no',
  'hold',
  'wait',
  'cut',
  'pause',
  'nope',
  'nah',
  'nevermind',
  'never',
  'bad',
  'actually',
]);

/** Values voice.chunkPlan.punctuationBoundaries may take. */
export const PUNCTUATION_BOUNDARIES = [
  '。',
  '，',
  '.',
  '!',
  '?',
  ';',
  ')',
  '،',
  '۔',
  '।',
  '॥',
  '|',
  '||',
  ',',
  ':',
] as const;

/** Formatter names voice.chunkPlan.formatPlan.formattersEnabled may list. */
export const FORMATTER_NAMES = [
  'markdown',
  'asterisk',
  'quote',
  'dash',
  'newline',
  'colon',
  'acronym',
  'dollarAmount',
  'email',
  'date',
  'time',
  'distance',
  'unit',
  'percentage',
  'phoneNumber',
  'number',
  'stripAsterisk',
] as const;

/** The platform's default `clientMessages` (reference 2.4). */
export const DEFAULT_CLIENT_MESSAGES: readonly string[] = Object.freeze([
  'conversation-update',
  'function-call',
  'hang',
  'model-output',
  'speech-update',
  'status-update',
  'transfer-update',
  'transcript',
  'tool-calls',
  'user-interrupted',
  'voice-input',
  'workflow.node.started',
  'assistant.started',
]);

/** The platform's default `serverMessages` (reference 2.4). */
export const DEFAULT_SERVER_MESSAGES: readonly string[] = Object.freeze([
  'conversation-update',
  'end-of-call-report',
  'function-call',
  'hang',
  'speech-update',
  'status-update',
  'tool-calls',
  'transfer-destination-request',
  'handoff-destination-request',
  'user-interrupted',
  'assistant.started',
]);
