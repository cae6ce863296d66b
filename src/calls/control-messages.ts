/**
 * Live call control: the messages a client sends on its transport socket (text frames) or POSTs
 * to `monitor.controlUrl`, checked with limits before they reach the call's worker.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import secureJson from 'secure-json-parse';

const Strict = <T extends Record<string, TSchema>>(properties: T) =>
  Type.Object(properties, { additionalProperties: false });
const Opt = <T extends TSchema>(schema: T) => Type.Optional(schema);
const Text = (maxLength: number) => Type.String({ maxLength });
const Literal = <T extends string>(value: T) => Type.Literal(value);

export const CONTROL_ACTIONS = [
  'mute-assistant',
  'unmute-assistant',
  'mute-customer',
  'unmute-customer',
  'say-first-message',
] as const;

const AnyObject = Type.Object({}, { additionalProperties: true });

const NumberDestination = Strict({
  type: Literal('number'),
  number: Type.String({ minLength: 3, maxLength: 40 }),
  extension: Opt(Type.String({ maxLength: 10 })),
  callerId: Opt(Type.String({ maxLength: 40 })),
  message: Opt(Text(1000)),
  description: Opt(Text(1000)),
  numberE164CheckEnabled: Opt(Type.Boolean()),
  transferPlan: Opt(AnyObject),
});

const SipDestination = Strict({
  type: Literal('sip'),
  sipUri: Type.String({ pattern: '^sips?:', maxLength: 512 }),
  sipHeaders: Opt(AnyObject),
  message: Opt(Text(1000)),
  description: Opt(Text(1000)),
  transferPlan: Opt(AnyObject),
});

/** Each message kind by its `type`. */
const SCHEMAS: Readonly<Record<string, TSchema>> = {
  say: Strict({
    type: Literal('say'),
    content: Type.String({ minLength: 1, maxLength: 10_000 }),
    endCallAfterSpoken: Opt(Type.Boolean()),
    interruptionsEnabled: Opt(Type.Boolean()),
    interruptAssistantEnabled: Opt(Type.Boolean()),
  }),
  'add-message': Strict({
    type: Literal('add-message'),
    message: Strict({
      role: Type.Union(['assistant', 'function', 'user', 'system', 'tool'].map(Literal)),
      content: Text(100_000),
      name: Opt(Text(64)),
      tool_call_id: Opt(Text(100)),
    }),
    triggerResponseEnabled: Opt(Type.Boolean()),
  }),
  control: Strict({
    type: Literal('control'),
    control: Type.Union(CONTROL_ACTIONS.map(Literal)),
  }),
  'end-call': Strict({ type: Literal('end-call') }),
  hangup: Strict({ type: Literal('hangup') }),
  transfer: Strict({
    type: Literal('transfer'),
    destination: Type.Union([NumberDestination, SipDestination]),
    content: Opt(Text(10_000)),
  }),
};

export const CONTROL_MESSAGE_TYPES = Object.keys(SCHEMAS);

export type ControlMessage = { readonly type: string } & Readonly<Record<string, unknown>>;

export type ControlCheck =
  | { readonly ok: true; readonly message: ControlMessage }
  | { readonly ok: false; readonly code: string; readonly error: string };

function problem(code: string, error: string): ControlCheck {
  return { ok: false, code, error };
}

/** Checks a parsed control message (an HTTP body, or a parsed text frame). */
export function checkControlMessage(value: unknown): ControlCheck {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return problem('invalid-message', 'A control message must be a JSON object');
  }
  const type = (value as { type?: unknown }).type;
  if (typeof type !== 'string') {
    return problem('invalid-message', 'A control message needs a string `type`');
  }
  const schema = SCHEMAS[type];
  if (schema === undefined) {
    return problem(
      'unknown-message-type',
      `Unknown control message type "${type.slice(0, 64)}"; expected one of ${CONTROL_MESSAGE_TYPES.join(', ')}`,
    );
  }
  const first = Value.Errors(schema, value).First();
  if (first !== undefined) {
    const path = first.path === '' ? '(message)' : first.path.slice(1).replaceAll('/', '.');
    return problem('invalid-message', `${type}: ${path} ${first.message}`);
  }
  return { ok: true, message: value as ControlMessage };
}

/** Parses and checks a text frame. Prototype-poisoning keys are refused. */
export function parseControlMessage(text: string): ControlCheck {
  let value: unknown;
  try {
    value = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch {
    return problem('invalid-json', 'Text frames must hold one JSON control message');
  }
  return checkControlMessage(value);
}
