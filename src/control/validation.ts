import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsImport from 'ajv-formats';
import type { TSchema } from '@sinclair/typebox';
import { ParlaError } from '../core/errors.js';

// ajv-formats ships CommonJS with a default export; under NodeNext it arrives wrapped.
const addFormats = addFormatsImport as unknown as typeof addFormatsImport.default;

function createAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    removeAdditional: false,
    useDefaults: true,
    coerceTypes,
    discriminator: true,
    strict: false,
  });
  addFormats(ajv);
  return ajv;
}

/** Bodies are validated as sent: no type coercion, unknown properties rejected, defaults filled. */
export const bodyAjv = createAjv(false);
/** Query strings and path parameters arrive as text and are coerced to their declared types. */
export const queryAjv = createAjv(true);

const compiled = new WeakMap<object, ValidateFunction>();

/** Validates `value` (filling defaults in place) or throws a 400 listing every problem. */
export function validateBody<T>(schema: TSchema, value: unknown, prefix = ''): T {
  let validate = compiled.get(schema);
  if (validate === undefined) {
    validate = bodyAjv.compile(schema);
    compiled.set(schema, validate);
  }
  if (!validate(value)) {
    throw new ParlaError('ERR_VALIDATION', formatErrors(validate.errors ?? [], prefix));
  }
  return value as T;
}

/**
 * Turns Ajv errors into the platform's messages: one string per problem, naming the field path
 * (`assistant.model.provider must be one of …`, `property foo should not exist`).
 */
export function formatErrors(errors: readonly ErrorObject[], prefix = ''): string[] {
  const discriminated = new Set<string>();
  const out = new Set<string>();
  for (const error of errors) {
    if (error.keyword === 'discriminator') {
      discriminated.add(error.instancePath);
    }
  }
  for (const error of errors) {
    // A failed oneOf/anyOf repeats what its branches said; report the branches only.
    if ((error.keyword === 'oneOf' || error.keyword === 'anyOf') && errors.length > 1) {
      continue;
    }
    if (error.keyword === 'discriminator' && !discriminated.has(error.instancePath)) {
      continue;
    }
    out.add(formatError(error, prefix));
  }
  return [...out];
}

function fieldPath(instancePath: string, prefix: string): string {
  const path = instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
  return [prefix, path].filter((p) => p !== '').join('.');
}

function formatError(error: ErrorObject, prefix: string): string {
  const path = fieldPath(error.instancePath, prefix);
  const field = path === '' ? 'body' : path;
  const params = error.params as Record<string, unknown>;
  const owner = path === '' ? '' : `${path}.`;
  switch (error.keyword) {
    case 'additionalProperties':
      return `${owner}property ${String(params.additionalProperty)} should not exist`;
    case 'required':
      return `${owner}${String(params.missingProperty)} should not be empty`;
    case 'maxLength':
      return `${field} must be shorter than or equal to ${String(params.limit)} characters`;
    case 'minLength':
      return `${field} must be longer than or equal to ${String(params.limit)} characters`;
    case 'maximum':
      return `${field} must not be greater than ${String(params.limit)}`;
    case 'minimum':
      return `${field} must not be less than ${String(params.limit)}`;
    case 'exclusiveMaximum':
      return `${field} must be less than ${String(params.limit)}`;
    case 'exclusiveMinimum':
      return `${field} must be greater than ${String(params.limit)}`;
    case 'maxItems':
      return `${field} must contain no more than ${String(params.limit)} elements`;
    case 'minItems':
      return `${field} must contain at least ${String(params.limit)} elements`;
    case 'pattern':
      return `${field} must match ${String(params.pattern)} regular expression`;
    case 'format':
      return `${field} must be a valid ${String(params.format)}`;
    case 'enum':
      return `${field} must be one of the following values: ${(params.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'const':
      return `${field} must be equal to ${JSON.stringify(params.allowedValue)}`;
    case 'type':
      return `${field} must be ${article(String(params.type))}`;
    case 'discriminator':
      return params.error === 'mapping'
        ? `${owner}${String(params.tag)} must be one of the supported kinds`
        : `${owner}${String(params.tag)} should not be empty`;
    default:
      return `${field} ${error.message ?? 'is invalid'}`;
  }
}

function article(type: string): string {
  const name = type === 'integer' ? 'integer number' : type;
  return /^[aeiou]/.test(name) ? `an ${name}` : `a ${name}`;
}
