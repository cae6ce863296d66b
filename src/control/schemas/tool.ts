import { Type, type TObject, type TProperties, type TSchema } from '@sinclair/typebox';
import {
  AnyDestination,
  AnyObject,
  Discriminated,
  ForUpdate,
  Opt,
  Server,
  Strict,
  StringEnum,
} from './common.js';

/** Tool names go to the model verbatim. */
export const ToolName = Type.String({ pattern: '^[a-zA-Z0-9_-]{1,40}$', maxLength: 40 });
const Description = Type.String({ maxLength: 1000 });

const Condition = Strict({
  operator: StringEnum(['eq', 'neq', 'gt', 'gte', 'lt', 'lte'] as const),
  param: Type.String({ maxLength: 1000 }),
  value: Type.Union([Type.String(), Type.Number(), Type.Boolean()]),
});

const ToolMessage = Strict({
  type: StringEnum([
    'request-start',
    'request-complete',
    'request-failed',
    'request-response-delayed',
  ] as const),
  contents: Opt(
    Type.Array(
      Strict({
        type: Type.Literal('text'),
        text: Type.String({ maxLength: 1000 }),
        language: Type.String({ maxLength: 10 }),
      }),
    ),
  ),
  content: Opt(Type.String({ maxLength: 1000 })),
  blocking: Opt(Type.Boolean()),
  conditions: Opt(Type.Array(Condition)),
  role: Opt(StringEnum(['assistant', 'system'] as const)),
  endCallAfterSpokenEnabled: Opt(Type.Boolean()),
  timingMilliseconds: Opt(Type.Number({ minimum: 100, maximum: 120000 })),
});

const JsonSchemaLike: TSchema = Type.Object(
  {
    type: Opt(StringEnum(['string', 'number', 'integer', 'boolean', 'array', 'object'] as const)),
    items: Opt(AnyObject),
    properties: Opt(AnyObject),
    description: Opt(Type.String()),
    pattern: Opt(Type.String()),
    format: Opt(Type.String()),
    required: Opt(Type.Array(Type.String())),
    enum: Opt(Type.Array(Type.String())),
    title: Opt(Type.String()),
    default: Opt(Type.Unknown()),
    value: Opt(Type.String()),
  },
  { additionalProperties: true },
);

export const ToolFunction = Strict({
  name: ToolName,
  strict: Opt(Type.Boolean()),
  description: Opt(Description),
  parameters: Opt(
    Strict({
      type: Type.Literal('object'),
      properties: Type.Record(Type.String(), AnyObject),
      required: Opt(Type.Array(Type.String())),
    }),
  ),
});

const VariableExtractionPlan = Strict({
  schema: Opt(JsonSchemaLike),
  aliases: Opt(
    Type.Array(
      Strict({
        key: Type.String({ maxLength: 40, pattern: '^[a-zA-Z_][a-zA-Z0-9_]*$' }),
        value: Type.String({ maxLength: 10000 }),
      }),
    ),
  ),
});

const BackoffPlan = Strict({
  type: StringEnum(['fixed', 'exponential'] as const),
  maxRetries: Type.Number({ minimum: 0, maximum: 10 }),
  baseDelaySeconds: Type.Number({ minimum: 0, maximum: 10 }),
  excludedStatusCodes: Opt(Type.Array(Type.Number())),
});

const common = {
  messages: Opt(Type.Array(ToolMessage)),
  function: Opt(ToolFunction),
  server: Opt(Server),
  async: Opt(Type.Boolean()),
  rejectionPlan: Opt(AnyObject),
};

function kind(type: string, properties: TProperties): TObject {
  return Strict({ type: Type.Literal(type), ...common, ...properties });
}

/** The six kinds validated field by field. */
export const FULL_TOOL_KINDS = {
  apiRequest: kind('apiRequest', {
    method: StringEnum(['POST', 'GET', 'PUT', 'PATCH', 'DELETE'] as const),
    url: Type.String({ format: 'uri', maxLength: 2048 }),
    name: Opt(ToolName),
    description: Opt(Description),
    timeoutSeconds: Opt(Type.Number({ minimum: 1, maximum: 300, default: 20 })),
    body: Opt(JsonSchemaLike),
    headers: Opt(JsonSchemaLike),
    backoffPlan: Opt(BackoffPlan),
    variableExtractionPlan: Opt(VariableExtractionPlan),
    credentialId: Opt(Type.String()),
  }),
  function: kind('function', { variableExtractionPlan: Opt(VariableExtractionPlan) }),
  endCall: kind('endCall', {}),
  transferCall: kind('transferCall', {
    destinations: Opt(Type.Array(AnyDestination, { maxItems: 100 })),
  }),
  dtmf: kind('dtmf', {}),
  query: kind('query', {
    knowledgeBases: Opt(
      Type.Array(
        Strict({
          provider: Opt(Type.Literal('google')),
          model: Opt(Type.String()),
          name: Type.String({ maxLength: 40 }),
          description: Description,
          fileIds: Type.Array(Type.String()),
        }),
      ),
    ),
  }),
} as const;

/** The other kinds: common fields validated, vendor-specific fields passed through. */
export const OTHER_TOOL_TYPES = [
  'ghl',
  'make',
  'output',
  'bash',
  'computer',
  'textEditor',
  'google.calendar.event.create',
  'google.sheets.row.append',
  'google.calendar.availability.check',
  'slack.message.send',
  'sms',
  'mcp',
  'gohighlevel.calendar.availability.check',
  'gohighlevel.calendar.event.create',
  'gohighlevel.contact.create',
  'gohighlevel.contact.get',
] as const;

function looseKind(type: string): TObject {
  return Type.Object(
    { type: Type.Literal(type), ...common, name: Opt(ToolName), description: Opt(Description) },
    { additionalProperties: true },
  );
}

const KIND_SCHEMAS: Record<string, TObject> = {
  ...FULL_TOOL_KINDS,
  ...Object.fromEntries(OTHER_TOOL_TYPES.map((t) => [t, looseKind(t)])),
};

export const TOOL_TYPES = Object.keys(KIND_SCHEMAS);

export const CreateTool = Discriminated('type', Object.values(KIND_SCHEMAS), {
  title: 'CreateTool',
});

/** PATCH bodies are checked against the stored kind (see toolUpdateSchema); the route checks only this. */
export const UpdateToolEnvelope = Type.Object(
  { type: Opt(StringEnum(TOOL_TYPES)) },
  {
    additionalProperties: true,
    description: 'Fields of the tool kind, all optional; `type` may be repeated but not changed',
  },
);

const updateSchemas = new Map<string, TObject>();

export function toolUpdateSchema(type: string): TObject | undefined {
  let schema = updateSchemas.get(type);
  const base = KIND_SCHEMAS[type];
  if (schema === undefined && base !== undefined) {
    schema = ForUpdate(base);
    if (base.additionalProperties === true) {
      schema = Type.Object(schema.properties, { additionalProperties: true });
    }
    updateSchemas.set(type, schema);
  }
  return schema;
}
