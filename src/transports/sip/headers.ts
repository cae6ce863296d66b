import { splitTopLevel } from './syntax.js';

/** Compact forms (RFC 3261 §7.3.3 and the extensions that registered one). */
const COMPACT_FORMS = new Map<string, string>([
  ['a', 'Accept-Contact'],
  ['b', 'Referred-By'],
  ['c', 'Content-Type'],
  ['d', 'Request-Disposition'],
  ['e', 'Content-Encoding'],
  ['f', 'From'],
  ['i', 'Call-ID'],
  ['j', 'Reject-Contact'],
  ['k', 'Supported'],
  ['l', 'Content-Length'],
  ['m', 'Contact'],
  ['n', 'Identity-Info'],
  ['o', 'Event'],
  ['r', 'Refer-To'],
  ['s', 'Subject'],
  ['t', 'To'],
  ['u', 'Allow-Events'],
  ['v', 'Via'],
  ['x', 'Session-Expires'],
  ['y', 'Identity'],
]);

/** Spellings that title case would get wrong. */
const SPECIAL_CASE = [
  'Call-ID',
  'CSeq',
  'WWW-Authenticate',
  'MIME-Version',
  'RAck',
  'RSeq',
  'Min-SE',
];
const CANONICAL = new Map(SPECIAL_CASE.map((name) => [name.toLowerCase(), name]));

/**
 * Headers whose values are comma-separated lists (RFC 3261 §7.3.1), so that several values may
 * share one line. Authorization-style headers hold commas without being lists.
 */
const LIST_HEADERS = new Set(
  [
    'Via',
    'Contact',
    'Route',
    'Record-Route',
    'Path',
    'Service-Route',
    'Allow',
    'Allow-Events',
    'Supported',
    'Require',
    'Proxy-Require',
    'Unsupported',
    'Accept',
    'Accept-Encoding',
    'Accept-Language',
    'Content-Encoding',
    'Content-Language',
    'Alert-Info',
    'Call-Info',
    'Error-Info',
    'In-Reply-To',
    'Warning',
    'Reason',
    'P-Asserted-Identity',
    'P-Preferred-Identity',
  ].map((name) => name.toLowerCase()),
);

/** Names seen so far; bounded, since a peer chooses extension header names freely. */
const NAME_CACHE = new Map<string, { readonly canonical: string; readonly key: string }>();
const NAME_CACHE_LIMIT = 1_024;

function lookupName(name: string): { readonly canonical: string; readonly key: string } {
  const cached = NAME_CACHE.get(name);
  if (cached !== undefined) {
    return cached;
  }
  const lower = name.toLowerCase();
  const canonical =
    COMPACT_FORMS.get(lower) ??
    CANONICAL.get(lower) ??
    lower.replace(/(^|-)([a-z])/g, (_match, dash: string, letter: string) => {
      return dash + letter.toUpperCase();
    });
  const entry = { canonical, key: canonical.toLowerCase() };
  if (NAME_CACHE.size < NAME_CACHE_LIMIT) {
    NAME_CACHE.set(name, entry);
  }
  return entry;
}

/** The full, conventionally cased name of a header field name as received. */
export function canonicalHeaderName(name: string): string {
  return lookupName(name).canonical;
}

export function isListHeader(name: string): boolean {
  return LIST_HEADERS.has(keyOf(name));
}

export interface SipHeaderField {
  /** Canonical full name, such as `Call-ID`. */
  readonly name: string;
  readonly value: string;
}

/**
 * The header fields of a message, in order. Lookups are case-insensitive and accept compact
 * forms; values are stored unfolded and trimmed, exactly one line per field as received.
 */
export class SipHeaders {
  private fields: StoredField[] = [];

  constructor(fields?: Iterable<readonly [string, string]>) {
    for (const [name, value] of fields ?? []) {
      this.append(name, value);
    }
  }

  get size(): number {
    return this.fields.length;
  }

  /** The first field's value. */
  get(name: string): string | undefined {
    const key = keyOf(name);
    return this.fields.find((field) => field.key === key)?.value;
  }

  has(name: string): boolean {
    return this.get(name) !== undefined;
  }

  /**
   * Every value of `name` in order. List headers are split at top-level commas, so
   * `Via: a, b` and two Via lines give the same result; other headers give one value a line.
   */
  getAll(name: string): string[] {
    const key = keyOf(name);
    const list = LIST_HEADERS.has(key);
    const values: string[] = [];
    for (const field of this.fields) {
      if (field.key !== key) {
        continue;
      }
      if (!list) {
        values.push(field.value);
        continue;
      }
      for (const part of splitTopLevel(field.value, ',') ?? [field.value]) {
        const trimmed = part.trim();
        if (trimmed !== '') {
          values.push(trimmed);
        }
      }
    }
    return values;
  }

  append(name: string, value: string): this {
    this.fields.push(stored(name, value));
    return this;
  }

  /** Adds the field before every other field (a new top Via, a Record-Route). */
  prepend(name: string, value: string): this {
    this.fields.unshift(stored(name, value));
    return this;
  }

  /** Replaces every field of `name` with one field, kept at the first one's position. */
  set(name: string, value: string): this {
    const key = keyOf(name);
    const index = this.fields.findIndex((field) => field.key === key);
    this.remove(name);
    const field = stored(name, value);
    if (index < 0) {
      this.fields.push(field);
    } else {
      this.fields.splice(index, 0, field);
    }
    return this;
  }

  remove(name: string): this {
    const key = keyOf(name);
    this.fields = this.fields.filter((field) => field.key !== key);
    return this;
  }

  /**
   * Replaces the first value of a list header (the top Via), leaving the rest of its line.
   */
  replaceFirst(name: string, value: string): this {
    const key = keyOf(name);
    const index = this.fields.findIndex((field) => field.key === key);
    if (index < 0) {
      return this.append(name, value);
    }
    const field = this.fields[index]!;
    const parts = splitTopLevel(field.value, ',') ?? [field.value];
    parts[0] = value;
    this.fields[index] = stored(field.name, parts.map((part) => part.trim()).join(', '));
    return this;
  }

  /** Removes the first value of a list header (a proxy's own Via on a response). */
  removeFirst(name: string): this {
    const key = keyOf(name);
    const index = this.fields.findIndex((field) => field.key === key);
    if (index < 0) {
      return this;
    }
    const field = this.fields[index]!;
    const parts = splitTopLevel(field.value, ',') ?? [field.value];
    if (parts.length <= 1) {
      this.fields.splice(index, 1);
    } else {
      const rest = parts.slice(1).map((part) => part.trim());
      this.fields[index] = stored(field.name, rest.join(', '));
    }
    return this;
  }

  entries(): readonly SipHeaderField[] {
    return this.fields;
  }

  clone(): SipHeaders {
    const copy = new SipHeaders();
    copy.fields = this.fields.slice();
    return copy;
  }
}

interface StoredField extends SipHeaderField {
  readonly key: string;
}

function keyOf(name: string): string {
  return lookupName(name).key;
}

function stored(name: string, value: string): StoredField {
  const { canonical, key } = lookupName(name);
  return { name: canonical, value: value.trim(), key };
}
