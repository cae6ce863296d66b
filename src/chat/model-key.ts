import type { ModelProviderRegistry } from '../providers/llm/model-provider.js';
import type { Doc } from '../store/resource-store.js';
import type { Store } from '../store/store.js';

/** How many of an org's credentials for one provider are looked at (newest first). */
const ORG_CREDENTIALS_SCANNED = 20;

function keyOf(credential: unknown, provider: string): string | null {
  const c = credential as { provider?: unknown; apiKey?: unknown } | null;
  return c?.provider === provider && typeof c.apiKey === 'string' && c.apiKey !== ''
    ? c.apiKey
    : null;
}

/**
 * The vendor key for `provider`, first found wins: the assistant's inline `credentials`, the
 * credentials its `credentialIds` name, the org's newest credential for that provider, then the
 * server's default. Null when there is none.
 */
export async function findModelKey(
  store: Store,
  orgId: string,
  assistant: Doc,
  provider: string,
  registry: ModelProviderRegistry | undefined,
): Promise<string | null> {
  const credentials = store.resources.credentials;
  for (const credential of Array.isArray(assistant.credentials) ? assistant.credentials : []) {
    const key = keyOf(credential, provider);
    if (key !== null) {
      return key;
    }
  }
  const ids = Array.isArray(assistant.credentialIds)
    ? assistant.credentialIds.filter((id): id is string => typeof id === 'string')
    : [];
  for (const id of ids) {
    const key = keyOf(await credentials.getInternal(orgId, id), provider);
    if (key !== null) {
      return key;
    }
  }
  const listed = await credentials.list(orgId, {
    limit: ORG_CREDENTIALS_SCANNED,
    equals: { provider },
  });
  for (const { id } of listed) {
    const key = keyOf(await credentials.getInternal(orgId, id), provider);
    if (key !== null) {
      return key;
    }
  }
  return registry?.defaults(provider).apiKey ?? null;
}
