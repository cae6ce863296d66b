import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { badRequest } from '../../core/errors.js';
import {
  E164,
  Hook,
  Id,
  LOOSE_NUMBER,
  Name40,
  Opt,
  Server,
  Strict,
  TransferDestination,
} from './common.js';

/** The only phone-number kind this server has: numbers on the caller's own SIP trunks. */
export const BYO_PHONE_NUMBER = 'byo-phone-number';

/** A schema that also accepts `null`, which PATCH uses to unset a field. */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, nullable: true });
}

/** Throws a 400 naming `path` unless `number` is E.164 (or, with the check off, loose). */
export function checkNumber(path: string, number: unknown, e164CheckEnabled: unknown): void {
  if (typeof number !== 'string') {
    return;
  }
  if (e164CheckEnabled === false) {
    if (!LOOSE_NUMBER.test(number)) {
      throw badRequest(
        `${path} must be an optional leading plus followed only by letters and digits`,
      );
    }
  } else if (!E164.test(number)) {
    throw badRequest(
      `${path} must be a valid phone number in E.164 format (e.g. +14155551234), or set numberE164CheckEnabled to false`,
    );
  }
}

export const PhoneNumberValue = Type.String({
  minLength: 3,
  maxLength: 40,
  description: 'E.164 unless numberE164CheckEnabled is false',
});

const HandlerId = Type.String({ ...Id, description: 'Handler of incoming calls' });
const RingingHooks = Type.Array(Hook(['call.ringing']));

export const CreatePhoneNumber = Strict({
  provider: Type.Literal(BYO_PHONE_NUMBER),
  name: Opt(Name40),
  number: Opt(PhoneNumberValue),
  numberE164CheckEnabled: Opt(Type.Boolean({ default: true })),
  credentialId: Type.String({ ...Id, description: 'A credential of provider byo-sip-trunk' }),
  assistantId: Opt(HandlerId),
  squadId: Opt(HandlerId),
  workflowId: Opt(HandlerId),
  fallbackDestination: Opt(TransferDestination),
  hooks: Opt(RingingHooks),
  server: Opt(Server),
});

/** PATCH body. The SDK sends `provider` too; `null` unsets the handler, fallback and server. */
export const UpdatePhoneNumber = Strict({
  provider: Opt(Type.Literal(BYO_PHONE_NUMBER)),
  name: Opt(Name40),
  number: Opt(PhoneNumberValue),
  numberE164CheckEnabled: Opt(Type.Boolean()),
  credentialId: Opt(Id),
  assistantId: Opt(Nullable(HandlerId)),
  squadId: Opt(Nullable(HandlerId)),
  workflowId: Opt(Nullable(HandlerId)),
  fallbackDestination: Opt(Nullable(TransferDestination)),
  hooks: Opt(RingingHooks),
  server: Opt(Nullable(Server)),
});
