import {
  Type,
  type TObject,
  type TProperties,
  type TSchema,
  type ObjectOptions,
  type TOptional,
  type TString,
  type Static,
} from '@sinclair/typebox';
import { DATE_FILTERS } from '../../store/resource-store.js';

/** An object that rejects unknown properties, as the platform does. */
export function Strict<T extends TProperties>(
  properties: T,
  options: ObjectOptions = {},
): TObject<T> {
  return Type.Object(properties, { additionalProperties: false, ...options });
}

export const Opt = <T extends TSchema>(schema: T) => Type.Optional(schema);

export function StringEnum<const T extends readonly string[]>(values: T, options: object = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** A union of object kinds told apart by one property (Ajv `discriminator`), with clear errors. */
export function Discriminated<T extends TSchema>(
  propertyName: string,
  kinds: readonly T[],
  options: object = {},
) {
  return Type.Unsafe<T extends TSchema ? Static<T> : never>({
    type: 'object',
    discriminator: { propertyName },
    required: [propertyName],
    oneOf: kinds,
    ...options,
  });
}

export const Name40 = Type.String({
  maxLength: 40,
  description: 'Own reference label, maximum length 40',
});
export const Id = Type.String({ minLength: 1, maxLength: 100 });
export const IdParams = Strict({ id: Id });
export const AnyObject = Type.Object({}, { additionalProperties: true });
export const Metadata = Type.Record(Type.String(), Type.Unknown());

/** The fields every stored resource carries. */
export const ResourceIdentity = {
  id: Type.String(),
  orgId: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
};

const dateFilterProps = Object.fromEntries(
  DATE_FILTERS.map((name) => [name, Opt(Type.String({ format: 'date-time' }))]),
) as Record<(typeof DATE_FILTERS)[number], TOptional<TString>>;

export const LimitQuery = {
  limit: Opt(Type.Integer({ minimum: 0, maximum: 1000, default: 100 })),
  ...dateFilterProps,
};

export const PageQuery = {
  ...LimitQuery,
  page: Opt(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  sortOrder: Opt(StringEnum(['ASC', 'DESC'] as const, { default: 'DESC' })),
  sortBy: Opt(StringEnum(['createdAt', 'updatedAt'] as const, { default: 'createdAt' })),
};

/** A comma-separated list of ids in a query string (`idAny`, `assistantIdAny`). */
export const IdList = Type.String({ maxLength: 10_000, pattern: '^[^,]+(,[^,]+)*$' });

/** `a,b,c` → ['a', 'b', 'c']; absent → undefined. */
export function splitIds(value: unknown): string[] | undefined {
  return typeof value === 'string' ? value.split(',').map((id) => id.trim()) : undefined;
}

export const Server = Strict({
  url: Type.String({ format: 'uri', maxLength: 2048 }),
  timeoutSeconds: Opt(Type.Number({ minimum: 1, maximum: 300, default: 20 })),
  headers: Opt(Type.Record(Type.String(), Type.String())),
  credentialId: Opt(Type.String()),
  secret: Opt(Type.String({ description: 'Legacy: sent as the x-vapi-secret header' })),
  backoffPlan: Opt(
    Strict({
      type: StringEnum(['fixed', 'exponential'] as const),
      maxRetries: Type.Number({ minimum: 0, maximum: 10 }),
      baseDelaySeconds: Type.Number({ minimum: 0, maximum: 10 }),
    }),
  ),
  staticIpAddressesEnabled: Opt(Type.Boolean()),
});

const SummaryPlan = Strict({
  messages: Opt(Type.Array(AnyObject)),
  enabled: Opt(Type.Boolean()),
  timeoutSeconds: Opt(Type.Number({ minimum: 1, maximum: 60 })),
});

export const TransferPlan = Strict({
  mode: Opt(
    StringEnum([
      'blind-transfer',
      'blind-transfer-add-summary-to-sip-header',
      'warm-transfer-say-message',
      'warm-transfer-say-summary',
      'warm-transfer-wait-for-operator-to-speak-first-and-then-say-message',
      'warm-transfer-wait-for-operator-to-speak-first-and-then-say-summary',
      'warm-transfer-experimental',
    ] as const),
  ),
  message: Opt(Type.Union([Type.String({ maxLength: 1000 }), AnyObject])),
  timeout: Opt(Type.Number({ minimum: 1, maximum: 600 })),
  sipVerb: Opt(StringEnum(['refer', 'bye', 'dial'] as const)),
  holdAudioUrl: Opt(Type.String()),
  transferCompleteAudioUrl: Opt(Type.String()),
  twiml: Opt(Type.String({ maxLength: 4096 })),
  summaryPlan: Opt(SummaryPlan),
  sipHeadersInReferToEnabled: Opt(Type.Boolean()),
  fallbackPlan: Opt(
    Strict({
      message: Type.Union([Type.String(), AnyObject]),
      endCallEnabled: Opt(Type.Boolean()),
    }),
  ),
});

const destinationCommon = {
  message: Opt(Type.Union([Type.String({ maxLength: 1000 }), AnyObject])),
  description: Opt(Type.String({ maxLength: 1000 })),
  transferPlan: Opt(TransferPlan),
};

export const NumberDestination = Strict({
  type: Type.Literal('number'),
  number: Type.String({ minLength: 3, maxLength: 40 }),
  numberE164CheckEnabled: Opt(Type.Boolean({ default: true })),
  extension: Opt(Type.String({ maxLength: 10, pattern: '^[0-9wW#*]+$' })),
  callerId: Opt(Type.String({ maxLength: 40 })),
  ...destinationCommon,
});

export const SipDestination = Strict({
  type: Type.Literal('sip'),
  sipUri: Type.String({ pattern: '^sips?:', maxLength: 512 }),
  sipHeaders: Opt(AnyObject),
  ...destinationCommon,
});

export const AssistantDestination = Strict({
  type: Type.Literal('assistant'),
  assistantName: Type.String({ maxLength: 40 }),
  ...destinationCommon,
});

export const TransferDestination = Discriminated('type', [NumberDestination, SipDestination]);
export const AnyDestination = Discriminated('type', [
  NumberDestination,
  SipDestination,
  AssistantDestination,
]);

/** A `call.ringing` (phone number) or `call.ending` (assistant) hook. */
export function Hook(on: readonly string[]) {
  return Strict({
    on: StringEnum(on),
    do: Type.Array(
      Discriminated('type', [
        Strict({ type: Type.Literal('transfer'), destination: Opt(TransferDestination) }),
        Strict({
          type: Type.Literal('say'),
          exact: Opt(Type.Union([Type.String(), Type.Array(Type.String())])),
          prompt: Opt(Type.Union([Type.String(), Type.Array(AnyObject)])),
        }),
        Strict({ type: Type.Literal('tool'), tool: Opt(AnyObject), toolId: Opt(Type.String()) }),
      ]),
      { maxItems: 20 },
    ),
    filters: Opt(
      Type.Array(
        Strict({
          type: Type.Literal('oneOf'),
          key: Type.String(),
          oneOf: Type.Array(Type.String()),
        }),
      ),
    ),
    options: Opt(
      Strict({
        timeoutSeconds: Opt(Type.Number({ minimum: 1, maximum: 1000 })),
        triggerMaxCount: Opt(Type.Number({ minimum: 1, maximum: 10 })),
        triggerResetMode: Opt(StringEnum(['never', 'onUserSpeech'] as const)),
      }),
    ),
  });
}

/** E.164: a plus, a non-zero digit, then up to 14 more digits. */
export const E164 = /^\+[1-9]\d{1,14}$/;
/** Non-E.164 numbers (SIP trunks): an optional plus, then letters and digits only. */
export const LOOSE_NUMBER = /^\+?[a-zA-Z0-9]+$/;

/** Copy of an object schema for PATCH: every property optional, no top-level defaults filled. */
export function ForUpdate<T extends TObject>(schema: T, omit: readonly string[] = []): TObject {
  const properties: Record<string, TSchema> = {};
  for (const [key, value] of Object.entries(schema.properties)) {
    if (omit.includes(key)) {
      continue;
    }
    const copy: Record<string, unknown> = {};
    for (const [name, keyword] of Object.entries(value)) {
      if (name !== 'default') {
        copy[name] = keyword;
      }
    }
    // Symbol keys (TypeBox's Kind/Optional markers) are not copied by Object.entries.
    properties[key] = Type.Optional(Object.assign(copy, pickSymbols(value)) as unknown as TSchema);
  }
  return Type.Object(properties, { additionalProperties: false });
}

function pickSymbols(schema: TSchema): Record<symbol, unknown> {
  const out: Record<symbol, unknown> = {};
  for (const symbol of Object.getOwnPropertySymbols(schema)) {
    out[symbol] = (schema as unknown as Record<symbol, unknown>)[symbol];
  }
  return out;
}
