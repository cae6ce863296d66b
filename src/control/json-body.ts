import secureJson from 'secure-json-parse';
import { ParlaError } from '../core/errors.js';

const SEALED_PREFIX = 'sealed:v1:';
const MAX_DEPTH = 64;

/**
 * Parses a JSON body: `__proto__` and `constructor.prototype` keys are refused (prototype
 * poisoning), and so are strings PostgreSQL cannot store (NUL, unpaired surrogates) or that
 * imitate a sealed secret; nesting is limited. Throws a 400 saying which rule was broken.
 */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') {
    return undefined;
  }
  let value: unknown;
  try {
    value = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    const poisoned = error instanceof SyntaxError && /prototype/i.test(error.message);
    throw new ParlaError(
      'ERR_VALIDATION',
      poisoned
        ? 'Request body must not contain __proto__ or constructor.prototype keys'
        : 'Request body is not valid JSON',
    );
  }
  const problem = checkStrings(value, 0);
  if (problem !== null) {
    throw new ParlaError('ERR_VALIDATION', [problem]);
  }
  return value;
}

/** The first problem found in `value`'s strings and keys, or null. */
export function checkStrings(value: unknown, depth: number, path = ''): string | null {
  if (depth > MAX_DEPTH) {
    return `body must not be nested deeper than ${MAX_DEPTH} levels`;
  }
  if (typeof value === 'string') {
    return checkString(value, path);
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) {
      const problem = checkStrings(value[i], depth + 1, join(path, String(i)));
      if (problem !== null) {
        return problem;
      }
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      const problem = checkString(key, path) ?? checkStrings(child, depth + 1, join(path, key));
      if (problem !== null) {
        return problem;
      }
    }
  }
  return null;
}

function checkString(value: string, path: string): string | null {
  const field = path === '' ? 'body' : path;
  if (value.includes('\u0000')) {
    return `${field} must not contain NUL characters`;
  }
  if (!value.isWellFormed()) {
    return `${field} must be well-formed Unicode (no unpaired surrogates)`;
  }
  if (value.startsWith(SEALED_PREFIX)) {
    return `${field} must not start with ${SEALED_PREFIX}`;
  }
  return null;
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}
