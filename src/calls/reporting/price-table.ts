import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { ParlaError } from '../../core/errors.js';
import { packageRoot } from '../../core/package-root.js';

/** Prices are USD; anything above this per unit is surely a typo (a cent where a dollar was meant). */
const MAX_PRICE = 1_000_000;
const Price = Type.Number({ minimum: 0, maximum: MAX_PRICE });
const Key = Type.String({ minLength: 1, maxLength: 200 });

const PerMinute = Type.Object({ perMinute: Price }, { additionalProperties: false });
/** A voice bills per minute of audio or per million characters sent to it. */
const VoicePrice = Type.Union([
  PerMinute,
  Type.Object({ perMillionCharacters: Price }, { additionalProperties: false }),
]);
const ModelPrice = Type.Object(
  {
    promptPerMillionTokens: Price,
    completionPerMillionTokens: Price,
    cachedPromptPerMillionTokens: Type.Optional(Price),
  },
  { additionalProperties: false },
);

function Section<T extends ReturnType<typeof Type.Object> | typeof VoicePrice>(price: T) {
  return Type.Object(
    { default: price, providers: Type.Record(Key, price) },
    { additionalProperties: false },
  );
}

export const PriceTableSchema = Type.Object(
  {
    $comment: Type.Optional(Type.String()),
    currency: Type.Literal('USD'),
    transport: Section(PerMinute),
    transcriber: Section(PerMinute),
    voice: Section(VoicePrice),
    model: Type.Object(
      { default: ModelPrice, providers: Type.Record(Key, Type.Record(Key, ModelPrice)) },
      { additionalProperties: false },
    ),
    parla: PerMinute,
  },
  { additionalProperties: false },
);

export type PriceTable = Static<typeof PriceTableSchema>;
export type VoicePriceEntry = Static<typeof VoicePrice>;
export type ModelPriceEntry = Static<typeof ModelPrice>;

/** Checks a parsed price table; every problem is named with its path (ERR_CONFIG). */
export function parsePriceTable(value: unknown, source = 'price table'): PriceTable {
  const problems = [...Value.Errors(PriceTableSchema, value)].map(
    (error) => `${source} ${error.path || '(root)'}: ${error.message}`,
  );
  if (problems.length > 0) {
    throw new ParlaError('ERR_CONFIG', problems.slice(0, 20));
  }
  return value as PriceTable;
}

/** Reads and validates a price table file (default: config/prices.json in the package). */
export function loadPriceTable(path = join(packageRoot(), 'config', 'prices.json')): PriceTable {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8')) as unknown;
  } catch (error) {
    throw new ParlaError('ERR_CONFIG', `price table ${path} cannot be read: ${String(error)}`, {
      cause: error,
    });
  }
  return parsePriceTable(parsed, path);
}

/** The price of a model: the longest listed prefix of its name for its provider, else default. */
export function modelPrice(table: PriceTable, provider: string, model: string): ModelPriceEntry {
  const models = table.model.providers[provider];
  if (models === undefined) {
    return table.model.default;
  }
  let best: string | undefined;
  for (const name of Object.keys(models)) {
    const matches = model === name || model.startsWith(`${name}-`);
    if (matches && (best === undefined || name.length > best.length)) {
      best = name;
    }
  }
  return best === undefined ? table.model.default : (models[best] ?? table.model.default);
}
