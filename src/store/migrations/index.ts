import * as m001 from './001-init.js';
import * as m002 from './002-phone-number-lookup.js';

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** Every migration, in order. Append only. */
export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'init', sql: m001.sql },
  { version: 2, name: 'phone-number-lookup', sql: m002.sql },
];
