import {
  DEFAULT_CLIENT_MESSAGES,
  DEFAULT_SERVER_MESSAGES,
  FORMATTER_NAMES,
  PUNCTUATION_BOUNDARIES,
} from '../../core/assistant-vocabulary.js';
import { Type, type TObject, type TProperties, type TSchema } from '@sinclair/typebox';
import {
  AnalysisPlan,
  ArtifactPlan,
  BackgroundSound,
  BackgroundSpeechDenoisingPlan,
  CompliancePlan,
  InlineCredential,
  KeypadInputPlan,
  MessagePlan,
  MonitorPlan,
  ObservabilityPlan,
  RegexOption,
  StartSpeakingPlan,
  StopSpeakingPlan,
  TransportConfiguration,
  VoicemailDetection,
} from './assistant-plans.js';
import {
  AnyObject,
  Discriminated,
  ForUpdate,
  Hook,
  Metadata,
  Name40,
  Opt,
  Server,
  StringEnum,
  Strict,
} from './common.js';

/**
 * Vendor objects (transcriber, model, voice): the common fields are validated, vendor-specific
 * ones are not specified and pass through.
 */
function Vendor<T extends TProperties>(properties: T) {
  return Type.Object(
    { provider: Type.String({ minLength: 1 }), ...properties },
    { additionalProperties: true },
  );
}

const Probability = Type.Number({ minimum: 0, maximum: 1 });

export const Transcriber = Vendor({
  model: Opt(Type.String()),
  language: Opt(Type.String()),
  confidenceThreshold: Opt(Probability),
  endUtteranceSilenceThreshold: Opt(Type.Number({ minimum: 0 })),
  wordBoost: Opt(Type.Array(Type.String())),
  realtimeUrl: Opt(Type.String()),
  disablePartialTranscripts: Opt(Type.Boolean()),
  enableUniversalStreamingApi: Opt(Type.Boolean()),
  formatTurns: Opt(Type.Boolean()),
  endOfTurnConfidenceThreshold: Opt(Probability),
  minEndOfTurnSilenceWhenConfident: Opt(Type.Number({ minimum: 0 })),
  wordFinalizationMaxWaitTime: Opt(Type.Number({ minimum: 0 })),
  maxTurnSilence: Opt(Type.Number({ minimum: 0 })),
  fallbackPlan: Opt(Strict({ transcribers: Type.Array(Vendor({})) })),
});

export const ModelMessage = Type.Object(
  {
    role: StringEnum(['assistant', 'function', 'user', 'system', 'tool'] as const),
    content: Type.Union([Type.String(), Type.Null(), Type.Array(AnyObject)]),
  },
  { additionalProperties: true },
);

export const Model = Vendor({
  model: Opt(Type.String()),
  messages: Opt(Type.Array(ModelMessage)),
  tools: Opt(
    Type.Array(
      Type.Object({ type: Type.String({ minLength: 1 }) }, { additionalProperties: true }),
    ),
  ),
  toolIds: Opt(Type.Array(Type.String())),
  knowledgeBase: Opt(AnyObject),
  knowledgeBaseId: Opt(Type.String()),
  thinking: Opt(
    Strict({ type: Type.Literal('enabled'), budgetTokens: Opt(Type.Integer({ minimum: 1 })) }),
  ),
  temperature: Opt(Type.Number({ minimum: 0, maximum: 2 })),
  maxTokens: Opt(Type.Integer({ minimum: 1, maximum: 10000 })),
  emotionRecognitionEnabled: Opt(Type.Boolean()),
  numFastTurns: Opt(Type.Number({ minimum: 0 })),
});

export const FormatPlan = Strict({
  enabled: Opt(Type.Boolean({ default: true })),
  numberToDigitsCutoff: Opt(Type.Number({ minimum: 0, default: 2025 })),
  replacements: Opt(
    Type.Array(
      Discriminated('type', [
        Strict({
          type: Type.Literal('exact'),
          key: Type.String(),
          value: Type.String(),
          replaceAllEnabled: Opt(Type.Boolean()),
        }),
        Strict({
          type: Type.Literal('regex'),
          regex: Type.String(),
          value: Type.String(),
          options: Opt(Type.Array(RegexOption)),
        }),
      ]),
    ),
  ),
  formattersEnabled: Opt(Type.Array(StringEnum(FORMATTER_NAMES))),
});

export const ChunkPlan = Strict({
  enabled: Opt(Type.Boolean({ default: true })),
  minCharacters: Opt(Type.Integer({ minimum: 1, maximum: 80, default: 30 })),
  punctuationBoundaries: Opt(Type.Array(StringEnum(PUNCTUATION_BOUNDARIES))),
  formatPlan: Opt(FormatPlan),
});

export const Voice = Vendor({
  voiceId: Opt(Type.String()),
  model: Opt(Type.String()),
  cachingEnabled: Opt(Type.Boolean()),
  speed: Opt(Type.Number({ exclusiveMinimum: 0 })),
  chunkPlan: Opt(ChunkPlan),
  fallbackPlan: Opt(Strict({ voices: Type.Array(Vendor({})) })),
});

export const CLIENT_MESSAGE_TYPES = [
  'conversation-update',
  'assistant.speechStarted',
  'function-call',
  'function-call-result',
  'hang',
  'language-changed',
  'metadata',
  'model-output',
  'speech-update',
  'status-update',
  'transcript',
  'tool-calls',
  'tool-calls-result',
  'tool.completed',
  'transfer-update',
  'user-interrupted',
  'voice-input',
  'workflow.node.started',
  'assistant.started',
] as const;

export const SERVER_MESSAGE_TYPES = [
  'assistant.started',
  'assistant.speechStarted',
  'conversation-update',
  'end-of-call-report',
  'function-call',
  'hang',
  'language-changed',
  'language-change-detected',
  'model-output',
  'phone-call-control',
  'speech-update',
  'status-update',
  'transcript',
  'transcript[transcriptType="final"]',
  'tool-calls',
  'transfer-destination-request',
  'handoff-destination-request',
  'transfer-update',
  'user-interrupted',
  'voice-input',
  'chat.created',
  'chat.deleted',
  'session.created',
  'session.updated',
  'session.deleted',
  'call.deleted',
  'call.delete.failed',
  'call.artifact.upload',
] as const;

/** Fields shared by assistants and workflows. */
export const sharedPlanProperties = {
  transcriber: Opt(Transcriber),
  voice: Opt(Voice),
  observabilityPlan: Opt(ObservabilityPlan),
  backgroundSound: Opt(BackgroundSound),
  credentials: Opt(Type.Array(InlineCredential)),
  credentialIds: Opt(Type.Array(Type.String())),
  server: Opt(Server),
  compliancePlan: Opt(CompliancePlan),
  analysisPlan: Opt(AnalysisPlan),
  artifactPlan: Opt(ArtifactPlan),
  startSpeakingPlan: Opt(StartSpeakingPlan),
  stopSpeakingPlan: Opt(StopSpeakingPlan),
  monitorPlan: Opt(MonitorPlan),
  backgroundSpeechDenoisingPlan: Opt(BackgroundSpeechDenoisingPlan),
  keypadInputPlan: Opt(KeypadInputPlan),
  voicemailDetection: Opt(VoicemailDetection),
  voicemailMessage: Opt(Type.String({ maxLength: 1000 })),
};

export const AssistantHook = Hook(['call.ending', 'customer.speech.timeout']);

const assistantProperties = {
  ...sharedPlanProperties,
  name: Opt(Name40),
  model: Opt(Model),
  firstMessage: Opt(Type.String()),
  firstMessageInterruptionsEnabled: Opt(Type.Boolean({ default: false })),
  firstMessageMode: Opt(
    StringEnum(
      [
        'assistant-speaks-first',
        'assistant-speaks-first-with-model-generated-message',
        'assistant-waits-for-user',
      ] as const,
      { default: 'assistant-speaks-first' },
    ),
  ),
  clientMessages: Opt(
    Type.Array(StringEnum(CLIENT_MESSAGE_TYPES), { default: DEFAULT_CLIENT_MESSAGES }),
  ),
  serverMessages: Opt(
    Type.Array(StringEnum(SERVER_MESSAGE_TYPES), { default: DEFAULT_SERVER_MESSAGES }),
  ),
  silenceTimeoutSeconds: Opt(Type.Number({ minimum: 10, maximum: 3600 })),
  maxDurationSeconds: Opt(Type.Number({ minimum: 10, maximum: 43200, default: 600 })),
  backgroundDenoisingEnabled: Opt(Type.Boolean({ description: 'Deprecated' })),
  modelOutputInMessagesEnabled: Opt(Type.Boolean()),
  transportConfigurations: Opt(Type.Array(TransportConfiguration)),
  hooks: Opt(Type.Array(AssistantHook)),
  endCallMessage: Opt(Type.String({ maxLength: 1000 })),
  endCallPhrases: Opt(Type.Array(Type.String({ minLength: 1, maxLength: 140 }))),
  metadata: Opt(Metadata),
  messagePlan: Opt(MessagePlan),
};

export const CreateAssistant = Strict(assistantProperties);
export const UpdateAssistant: TObject = ForUpdate(CreateAssistant);

/** A copy of a schema without any `default` (property maps keep properties named `default`). */
export function withoutDefaults<T extends TSchema>(schema: T): T {
  return strip(schema, false) as T;
}

function strip(value: unknown, isPropertyMap: boolean): unknown {
  if (Array.isArray(value)) {
    return value.map((item) => strip(item, false));
  }
  if (value === null || typeof value !== 'object') {
    return value;
  }
  // Spreading keeps TypeBox's symbol keys.
  const copy: Record<string | symbol, unknown> = { ...(value as Record<string, unknown>) };
  for (const key of Object.keys(copy)) {
    if (key === 'default' && !isPropertyMap) {
      delete copy[key];
    } else {
      copy[key] = strip(copy[key], key === 'properties' && !isPropertyMap);
    }
  }
  return copy;
}

/** An assistant changed for one use: every field optional, nothing filled in. */
export const AssistantOverrides = withoutDefaults(
  Strict({ ...assistantProperties, variableValues: Opt(Metadata) }),
);
