import { Type, type TObject } from '@sinclair/typebox';
import { AnyObject, Discriminated, LimitQuery, Opt, Server, Strict, StringEnum } from './common.js';

export const KNOWLEDGE_BASE_PROVIDERS = ['custom-knowledge-base', 'trieve'] as const;
export type KnowledgeBaseProvider = (typeof KNOWLEDGE_BASE_PROVIDERS)[number];

/** Bring-your-own knowledge base: Parla sends `knowledge-base-request` messages to `server`. */
export const CustomKnowledgeBase = Strict({
  provider: Type.Literal('custom-knowledge-base'),
  server: Server,
});

export const TrieveSearchPlan = Strict({
  searchType: StringEnum(['fulltext', 'semantic', 'hybrid', 'text'] as const),
  topK: Opt(Type.Number({ minimum: 1, maximum: 1000 })),
  removeStopWords: Opt(Type.Boolean()),
  scoreThreshold: Opt(Type.Number({ minimum: 0, maximum: 1 })),
});

/** Use an existing vector store of the provider. */
const TrieveImportPlan = Strict({
  type: Type.Literal('import'),
  providerId: Type.String({ minLength: 1 }),
});

/** Create a vector store from files and websites; chunk plans are kept as given. */
const TrieveCreatePlan = Strict({
  type: Type.Literal('create'),
  chunkPlans: Type.Array(AnyObject, { maxItems: 100 }),
});

export const TrieveKnowledgeBase = Strict({
  provider: Type.Literal('trieve'),
  // The platform states no limit; this bound only keeps documents reasonable.
  name: Opt(Type.String({ maxLength: 200 })),
  searchPlan: Opt(TrieveSearchPlan),
  createPlan: Opt(Discriminated('type', [TrieveImportPlan, TrieveCreatePlan])),
});

export const CreateKnowledgeBase = Discriminated('provider', [
  CustomKnowledgeBase,
  TrieveKnowledgeBase,
]);

export const KNOWLEDGE_BASE_KINDS: Readonly<Record<KnowledgeBaseProvider, TObject>> = {
  'custom-knowledge-base': CustomKnowledgeBase,
  trieve: TrieveKnowledgeBase,
};

/**
 * PATCH body as routed: any object whose `provider`, when sent, names a kind. The full check
 * against the stored kind's schema happens once the stored resource is known.
 */
export const UpdateKnowledgeBase = Type.Object(
  { provider: Opt(StringEnum(KNOWLEDGE_BASE_PROVIDERS)) },
  { additionalProperties: true },
);

export const KnowledgeBaseListQuery = Strict({ ...LimitQuery });
