import { Type, type Static } from '@sinclair/typebox';
import { AnyObject, Discriminated, Metadata, Opt, Server, StringEnum, Strict } from './common.js';
import {
  DEFAULT_ACKNOWLEDGEMENT_PHRASES,
  DEFAULT_INTERRUPTION_PHRASES,
} from '../../core/assistant-vocabulary.js';

export { DEFAULT_ACKNOWLEDGEMENT_PHRASES, DEFAULT_INTERRUPTION_PHRASES };

// Behaviour plans shared by assistants and workflows. Ranges and defaults follow the platform's
// documented values (see the API behaviour notes, section 2); fields without a documented default
// have none here.

const Seconds = (minimum: number, maximum: number, defaultValue?: number) =>
  Type.Number({
    minimum,
    maximum,
    ...(defaultValue === undefined ? {} : { default: defaultValue }),
  });

export const RegexOption = Strict({
  type: StringEnum(['ignore-case', 'whole-word', 'multi-line'] as const),
  enabled: Type.Boolean(),
});

const singleRegexRule = (type: string) =>
  Strict({
    type: Type.Literal(type),
    regex: Type.String(),
    regexOptions: Opt(Type.Array(RegexOption)),
    timeoutSeconds: Seconds(0, 15),
  });

/** `user` is accepted as well as `customer`: the platform's docs use it, its schema does not. */
export const CustomEndpointingRule = Discriminated('type', [
  singleRegexRule('assistant'),
  singleRegexRule('customer'),
  singleRegexRule('user'),
  Strict({
    type: Type.Literal('both'),
    assistantRegex: Type.String(),
    assistantRegexOptions: Opt(Type.Array(RegexOption)),
    customerRegex: Type.String(),
    customerRegexOptions: Opt(Type.Array(RegexOption)),
    timeoutSeconds: Seconds(0, 15),
  }),
]);

export const SmartEndpointingPlan = Discriminated('provider', [
  Strict({ provider: Type.Literal('vapi') }),
  Strict({
    provider: Type.Literal('livekit'),
    waitFunction: Opt(Type.String({ default: '20 + 500 * sqrt(x) + 2500 * x^3' })),
  }),
  Strict({ provider: Type.Literal('custom-endpointing-model'), server: Opt(Server) }),
]);

export const TranscriptionEndpointingPlan = Strict({
  onPunctuationSeconds: Opt(Seconds(0, 3, 0.1)),
  onNoPunctuationSeconds: Opt(Seconds(0, 3, 1.5)),
  onNumberSeconds: Opt(Seconds(0, 3, 0.5)),
});

export const StartSpeakingPlan = Strict({
  waitSeconds: Opt(Seconds(0, 5, 0.4)),
  smartEndpointingEnabled: Opt(
    Type.Union([Type.Boolean(), Type.Literal('livekit')], { description: 'Deprecated' }),
  ),
  smartEndpointingPlan: Opt(SmartEndpointingPlan),
  customEndpointingRules: Opt(Type.Array(CustomEndpointingRule, { default: [] })),
  transcriptionEndpointingPlan: Opt(TranscriptionEndpointingPlan),
});

export const StopSpeakingPlan = Strict({
  numWords: Opt(Type.Number({ minimum: 0, maximum: 10, default: 0 })),
  voiceSeconds: Opt(Seconds(0, 0.5, 0.2)),
  backoffSeconds: Opt(Seconds(0, 10, 1)),
  acknowledgementPhrases: Opt(
    Type.Array(Type.String({ maxLength: 240 }), { default: [...DEFAULT_ACKNOWLEDGEMENT_PHRASES] }),
  ),
  interruptionPhrases: Opt(
    Type.Array(Type.String({ maxLength: 240 }), { default: [...DEFAULT_INTERRUPTION_PHRASES] }),
  ),
});

export const MonitorPlan = Strict({
  listenEnabled: Opt(Type.Boolean({ default: true })),
  listenAuthenticationEnabled: Opt(Type.Boolean({ default: false })),
  controlEnabled: Opt(Type.Boolean({ default: true })),
  controlAuthenticationEnabled: Opt(Type.Boolean({ default: false })),
  monitorIds: Opt(Type.Array(Type.String(), { default: [] })),
});

const KeypadDelimiter = StringEnum(['#', '*', ''] as const);

export const KeypadInputPlan = Strict({
  enabled: Opt(Type.Boolean()),
  timeoutSeconds: Opt(Seconds(0, 10)),
  delimiters: Opt(Type.Union([KeypadDelimiter, Type.Array(KeypadDelimiter)])),
});

export const FourierDenoisingPlan = Strict({
  enabled: Opt(Type.Boolean({ default: false })),
  mediaDetectionEnabled: Opt(Type.Boolean({ default: true })),
  staticThreshold: Opt(Type.Number({ minimum: -80, maximum: 0, default: -35 })),
  baselineOffsetDb: Opt(Type.Number({ minimum: -30, maximum: -5, default: -15 })),
  windowSizeMs: Opt(Type.Number({ minimum: 1000, maximum: 30000, default: 3000 })),
  baselinePercentile: Opt(Type.Number({ minimum: 1, maximum: 99, default: 85 })),
});

/** `smartDenoisingPlan.enabled` has no default: the platform's schema and docs disagree. */
export const BackgroundSpeechDenoisingPlan = Strict({
  smartDenoisingPlan: Opt(Strict({ enabled: Opt(Type.Boolean()) })),
  fourierDenoisingPlan: Opt(FourierDenoisingPlan),
});

const AnalysisTimeout = Opt(Seconds(1, 60));
const PromptMessages = Opt(Type.Array(AnyObject));

const StructuredDataPlan = Strict({
  messages: PromptMessages,
  enabled: Opt(Type.Boolean()),
  schema: Opt(AnyObject),
  timeoutSeconds: AnalysisTimeout,
});

export const AnalysisPlan = Strict({
  minMessagesThreshold: Opt(Type.Number({ minimum: 0 })),
  summaryPlan: Opt(
    Strict({
      messages: PromptMessages,
      enabled: Opt(Type.Boolean()),
      timeoutSeconds: AnalysisTimeout,
    }),
  ),
  structuredDataPlan: Opt(StructuredDataPlan),
  structuredDataMultiPlan: Opt(
    Type.Array(Strict({ key: Type.String(), plan: StructuredDataPlan })),
  ),
  successEvaluationPlan: Opt(
    Strict({
      rubric: Opt(
        StringEnum([
          'NumericScale',
          'DescriptiveScale',
          'Checklist',
          'Matrix',
          'PercentageScale',
          'LikertScale',
          'AutomaticRubric',
          'PassFail',
        ] as const),
      ),
      messages: PromptMessages,
      enabled: Opt(Type.Boolean()),
      timeoutSeconds: AnalysisTimeout,
    }),
  ),
});

export const ArtifactPlan = Strict({
  recordingEnabled: Opt(Type.Boolean()),
  recordingFormat: Opt(StringEnum(['wav;l16', 'mp3'] as const)),
  recordingPath: Opt(Type.String()),
  recordingUseCustomStorageEnabled: Opt(Type.Boolean()),
  videoRecordingEnabled: Opt(Type.Boolean()),
  pcapEnabled: Opt(Type.Boolean()),
  pcapS3PathPrefix: Opt(Type.String()),
  pcapUseCustomStorageEnabled: Opt(Type.Boolean()),
  loggingEnabled: Opt(Type.Boolean()),
  loggingPath: Opt(Type.String()),
  fullMessageHistoryEnabled: Opt(Type.Boolean()),
  transcriptPlan: Opt(
    Strict({
      enabled: Opt(Type.Boolean()),
      assistantName: Opt(Type.String()),
      userName: Opt(Type.String()),
    }),
  ),
  structuredOutputIds: Opt(Type.Array(Type.String())),
  scorecardIds: Opt(Type.Array(Type.String())),
});

/** Removed by the platform in 2025-07 but still used by its docs; the hook replaces it. */
export const MessagePlan = Strict({
  idleMessages: Opt(Type.Array(Type.String({ maxLength: 1000 }))),
  idleMessageMaxSpokenCount: Opt(Type.Number({ minimum: 1, maximum: 10, default: 3 })),
  idleMessageResetCountOnUserSpeechEnabled: Opt(Type.Boolean({ default: false })),
  idleTimeoutSeconds: Opt(Seconds(5, 60, 10)),
  silenceTimeoutMessage: Opt(Type.String({ maxLength: 1000 })),
});

/** `hipaaEnabled: {hipaaEnabled: true}` is the spec's reading; plain booleans are the SDK's. */
const ComplianceFlag = (name: string) =>
  Type.Union([Type.Boolean(), Strict({ [name]: Type.Boolean() })]);

export const CompliancePlan = Strict({
  hipaaEnabled: Opt(ComplianceFlag('hipaaEnabled')),
  pciEnabled: Opt(ComplianceFlag('pciEnabled')),
});

export const ObservabilityPlan = Strict({
  provider: Type.String({ minLength: 1 }),
  tags: Opt(Type.Array(Type.String())),
  metadata: Opt(Metadata),
  promptName: Opt(Type.String()),
  promptVersion: Opt(Type.Number({ minimum: 1 })),
  traceName: Opt(Type.String()),
});

export const InlineCredential = Strict({
  provider: Type.String({ minLength: 1 }),
  apiKey: Opt(Type.String()),
  name: Opt(Type.String({ maxLength: 40 })),
});

export const TransportConfiguration = Strict({
  provider: Type.String({ minLength: 1 }),
  timeout: Opt(Type.Number({ minimum: 1, maximum: 600 })),
  record: Opt(Type.Boolean()),
  recordingChannels: Opt(StringEnum(['mono', 'dual'] as const)),
});

export const BackgroundSound = Type.Union([
  StringEnum(['off', 'office'] as const),
  Type.String({ format: 'uri', maxLength: 2048 }),
]);

const VoicemailBackoffPlan = Strict({
  startAtSeconds: Opt(Type.Number({ minimum: 0, default: 5 })),
  frequencySeconds: Opt(Type.Number({ minimum: 2.5, default: 5 })),
  maxRetries: Opt(Type.Number({ minimum: 1, maximum: 10, default: 6 })),
});

/** Documented defaults exist for the platform's own detector only. */
const beepPlan = (provider: string, withDefaults: boolean) =>
  Strict({
    provider: Type.Literal(provider),
    beepMaxAwaitSeconds: Opt(
      Type.Number({ minimum: 0, maximum: 60, ...(withDefaults ? { default: 30 } : {}) }),
    ),
    type: Opt(
      StringEnum(['audio', 'transcript'] as const, withDefaults ? { default: 'audio' } : {}),
    ),
    backoffPlan: Opt(VoicemailBackoffPlan),
  });

const TwilioVoicemailPlan = Strict({
  provider: Type.Literal('twilio'),
  voicemailDetectionTypes: Opt(
    Type.Array(
      StringEnum([
        'machine_start',
        'human',
        'fax',
        'unknown',
        'machine_end_beep',
        'machine_end_silence',
        'machine_end_other',
      ] as const),
      { default: ['machine_end_beep', 'machine_end_silence'] },
    ),
  ),
  enabled: Opt(Type.Boolean({ default: true })),
  machineDetectionTimeout: Opt(Type.Number({ minimum: 3, maximum: 59, default: 30 })),
  machineDetectionSpeechThreshold: Opt(
    Type.Number({ minimum: 1000, maximum: 6000, default: 2400 }),
  ),
  machineDetectionSpeechEndThreshold: Opt(
    Type.Number({ minimum: 500, maximum: 5000, default: 1200 }),
  ),
  machineDetectionSilenceTimeout: Opt(
    Type.Number({ minimum: 2000, maximum: 10000, default: 5000 }),
  ),
});

const VoicemailPlans = [
  beepPlan('vapi', true),
  beepPlan('google', false),
  beepPlan('openai', false),
  TwilioVoicemailPlan,
];

/**
 * `"off"` or a detector plan. Not an anyOf, where Ajv would fill no defaults: `pattern` applies
 * to strings only and the discriminator to objects only.
 */
export const VoicemailDetection = Type.Unsafe<'off' | Static<(typeof VoicemailPlans)[number]>>({
  type: ['string', 'object'],
  pattern: '^off$',
  discriminator: { propertyName: 'provider' },
  required: ['provider'],
  oneOf: VoicemailPlans,
});
