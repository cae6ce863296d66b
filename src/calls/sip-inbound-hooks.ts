/**
 * `call.ringing` hooks of a phone number, run when an INVITE for it arrives and before the call
 * is routed. Only `transfer` actions can act before the call is answered (there is no voice yet
 * to `say` with); the first transfer whose hook's filters all match forwards the caller.
 */
import type { Doc } from '../store/resource-store.js';

const MAX_HOOKS = 20;
const MAX_KEY_DEPTH = 8;

function isObject(value: unknown): value is Doc {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The value at a dotted path (`customer.number`, `call.customer.number`), as text. */
function valueAt(context: Doc, key: string): string | undefined {
  let value: unknown = context;
  const parts = key.split('.');
  if (parts.length > MAX_KEY_DEPTH) {
    return undefined;
  }
  for (const part of parts) {
    if (!isObject(value) || !Object.hasOwn(value, part)) {
      return undefined;
    }
    value = value[part];
  }
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
    ? String(value)
    : undefined;
}

/**
 * Whether every `oneOf` filter matches. Keys are paths into the call (`customer.number`), or
 * into `call`, `customer` or `phoneNumber` named first; a key naming nothing does not match.
 */
export function filtersMatch(filters: unknown, context: Doc): boolean {
  if (filters === undefined || filters === null) {
    return true;
  }
  if (!Array.isArray(filters)) {
    return false;
  }
  return filters.every((filter) => {
    if (!isObject(filter) || filter.type !== 'oneOf' || typeof filter.key !== 'string') {
      return false;
    }
    const allowed = Array.isArray(filter.oneOf) ? filter.oneOf : [];
    const value = valueAt(context, filter.key);
    return value !== undefined && allowed.includes(value);
  });
}

/** The destination the number's `call.ringing` hooks forward this call to, if any. */
export function ringingTransfer(phoneNumber: Doc, call: Doc): Doc | undefined {
  const hooks = Array.isArray(phoneNumber.hooks) ? phoneNumber.hooks.slice(0, MAX_HOOKS) : [];
  const context: Doc = { ...call, call, customer: call.customer, phoneNumber };
  for (const hook of hooks) {
    if (!isObject(hook) || hook.on !== 'call.ringing' || !Array.isArray(hook.do)) {
      continue;
    }
    if (!filtersMatch(hook.filters, context)) {
      continue;
    }
    for (const action of hook.do) {
      if (isObject(action) && action.type === 'transfer' && isObject(action.destination)) {
        return action.destination;
      }
    }
  }
  return undefined;
}
