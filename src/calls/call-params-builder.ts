import { resolveAssistant, type AssistantSource } from '../chat/assistant-config.js';
import { withDefaultFunction } from '../core/tool-functions.js';
import type { Doc } from '../store/resource-store.js';
import type { Store } from '../store/store.js';
import type {
  PipelineCallParams,
  ProviderServerSettings,
  VendorEndpoint,
} from './pipeline-call-params.js';

/** How many of an org's credentials for one provider are looked at (newest first). */
const ORG_CREDENTIALS_SCANNED = 20;
/** Tools an assistant may name by id. */
const MAX_TOOL_IDS = 100;

/** A call that cannot start: the call ends at once with this reason. */
export class CallStartError extends Error {
  constructor(
    readonly endedReason: string,
    message: string,
  ) {
    super(message);
    this.name = 'CallStartError';
  }
}

export interface CallParamsSettings {
  providers: ProviderServerSettings;
  vad: 'silero' | 'energy';
}

function isObject(value: unknown): value is Doc {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function providerOf(value: unknown): string[] {
  return isObject(value) && typeof value.provider === 'string' ? [value.provider] : [];
}

/** Every provider the assistant names: model, transcriber, voice and their fallbacks. */
export function providersNamed(assistant: Doc): string[] {
  const names: string[] = [];
  for (const part of ['model', 'transcriber', 'voice']) {
    names.push(...providerOf(assistant[part]));
  }
  const transcriber = isObject(assistant.transcriber) ? assistant.transcriber : {};
  const voice = isObject(assistant.voice) ? assistant.voice : {};
  const model = isObject(assistant.model) ? assistant.model : {};
  const fallbacks = [
    isObject(transcriber.fallbackPlan) ? transcriber.fallbackPlan.transcribers : undefined,
    isObject(voice.fallbackPlan) ? voice.fallbackPlan.voices : undefined,
    model.fallbackModels,
  ];
  for (const list of fallbacks) {
    for (const item of Array.isArray(list) ? list : []) {
      names.push(...providerOf(item));
    }
  }
  return [...new Set(names)];
}

function endpointOf(credential: unknown, provider: string): VendorEndpoint | null {
  if (!isObject(credential) || credential.provider !== provider) {
    return null;
  }
  const apiKey =
    typeof credential.apiKey === 'string' && credential.apiKey !== '' ? credential.apiKey : null;
  const baseUrl =
    typeof credential.baseUrl === 'string'
      ? credential.baseUrl
      : typeof credential.apiUrl === 'string'
        ? credential.apiUrl
        : undefined;
  if (apiKey === null && baseUrl === undefined) {
    return null;
  }
  return baseUrl === undefined ? { apiKey } : { apiKey, baseUrl };
}

/**
 * Turns a stored call into what its worker needs: the assistant it runs (stored or inline, a
 * squad's first member, overrides merged) and, per provider, the key found first among the
 * assistant's inline `credentials`, its `credentialIds` and the org's newest credential.
 */
export class CallParamsBuilder {
  constructor(
    private readonly store: Store,
    private readonly settings: CallParamsSettings,
  ) {}

  /** `call` must be read with getInternal (secrets open). Throws CallStartError. */
  async build(
    orgId: string,
    call: Doc,
    transportSampleRateHz: number,
  ): Promise<PipelineCallParams> {
    if (call.workflowId !== undefined || call.workflow !== undefined) {
      throw new CallStartError(
        'call.start.error-get-assistant',
        'Workflows cannot conduct websocket calls on this server yet',
      );
    }
    const customer = isObject(call.customer) ? call.customer : {};
    const overrides = [call.assistantOverrides, customer.assistantOverrides].filter(isObject);
    const source: AssistantSource = { overrides };
    for (const field of ['assistantId', 'squadId'] as const) {
      if (typeof call[field] === 'string') {
        source[field] = call[field];
      }
    }
    for (const field of ['assistant', 'squad'] as const) {
      if (isObject(call[field])) {
        source[field] = call[field];
      }
    }
    let resolved: { assistant: Doc; variables: Doc };
    try {
      resolved = await resolveAssistant(this.store, orgId, source);
    } catch (error) {
      throw new CallStartError(
        'assistant-not-found',
        error instanceof Error ? error.message : 'The assistant could not be loaded',
      );
    }
    const assistant = await this.withTools(orgId, resolved.assistant);
    const credentials: Record<string, VendorEndpoint> = {};
    for (const provider of providersNamed(assistant)) {
      const endpoint = await this.findEndpoint(orgId, assistant, provider);
      if (endpoint !== null) {
        credentials[provider] = endpoint;
      }
    }
    const phoneNumber = isObject(call.phoneNumber)
      ? call.phoneNumber
      : typeof call.phoneNumberId === 'string'
        ? await this.store.resources.phoneNumbers.getInternal(orgId, call.phoneNumberId)
        : null;
    return {
      callId: String(call.id),
      orgId,
      ...(phoneNumber !== null && { phoneNumber }),
      assistant,
      variableValues: resolved.variables,
      credentials,
      providers: this.settings.providers,
      transportSampleRateHz,
      vad: this.settings.vad,
    };
  }

  /**
   * `model.toolIds` resolved: the stored tools are appended to `model.tools` (a deleted tool is
   * left out), so the worker and the reporting side see one list, each tool with its function.
   */
  private async withTools(orgId: string, assistant: Doc): Promise<Doc> {
    const model = isObject(assistant.model) ? assistant.model : undefined;
    const ids = Array.isArray(model?.toolIds)
      ? model.toolIds.filter((id): id is string => typeof id === 'string').slice(0, MAX_TOOL_IDS)
      : [];
    if (model === undefined) {
      return assistant;
    }
    // Built-in kinds (transferCall, dtmf…) given inline without a function get their default one.
    const tools = (Array.isArray(model.tools) ? (model.tools as unknown[]) : []).map((tool) =>
      isObject(tool) ? withDefaultFunction(tool) : tool,
    );
    for (const id of ids) {
      const tool = await this.store.resources.tools.getInternal(orgId, id);
      if (tool !== null) {
        const definition: Doc = { ...tool };
        for (const field of ['orgId', 'createdAt', 'updatedAt']) {
          delete definition[field];
        }
        tools.push(withDefaultFunction(definition));
      }
    }
    return { ...assistant, model: { ...model, tools } };
  }

  private async findEndpoint(
    orgId: string,
    assistant: Doc,
    provider: string,
  ): Promise<VendorEndpoint | null> {
    for (const credential of Array.isArray(assistant.credentials) ? assistant.credentials : []) {
      const endpoint = endpointOf(credential, provider);
      if (endpoint !== null) {
        return endpoint;
      }
    }
    const credentials = this.store.resources.credentials;
    const ids = Array.isArray(assistant.credentialIds)
      ? assistant.credentialIds.filter((id): id is string => typeof id === 'string')
      : [];
    for (const id of ids) {
      const endpoint = endpointOf(await credentials.getInternal(orgId, id), provider);
      if (endpoint !== null) {
        return endpoint;
      }
    }
    const listed = await credentials.list(orgId, {
      limit: ORG_CREDENTIALS_SCANNED,
      equals: { provider },
    });
    for (const { id } of listed) {
      const endpoint = endpointOf(await credentials.getInternal(orgId, id), provider);
      if (endpoint !== null) {
        return endpoint;
      }
    }
    return null;
  }
}
