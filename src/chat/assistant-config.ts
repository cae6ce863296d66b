import { badRequest } from '../core/errors.js';
import type { Doc } from '../store/resource-store.js';
import type { Store } from '../store/store.js';

/** Where a chat's assistant comes from: at most one of the four, plus overrides applied in order. */
export interface AssistantSource {
  assistantId?: string;
  assistant?: Doc;
  squadId?: string;
  squad?: Doc;
  overrides: Doc[];
}

export interface ResolvedAssistant {
  /** The assistant with every override merged in (secrets opened, for internal use only). */
  assistant: Doc;
  variables: Doc;
}

const SOURCE_FIELDS = ['assistantId', 'assistant', 'squadId', 'squad'] as const;

/** The source fields given in a body (or a stored chat or session). */
export function sourceFields(doc: Doc): Partial<Omit<AssistantSource, 'overrides'>> {
  const out: Partial<Omit<AssistantSource, 'overrides'>> = {};
  for (const field of SOURCE_FIELDS) {
    const value = doc[field];
    if (value !== undefined && value !== null) {
      (out as Doc)[field] = value;
    }
  }
  return out;
}

export function countSources(doc: Doc): number {
  return SOURCE_FIELDS.filter((field) => doc[field] !== undefined && doc[field] !== null).length;
}

function isObject(value: unknown): value is Doc {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Deep merge for overrides: objects merge key by key, anything else (arrays too) replaces. */
export function deepMerge(base: Doc, patch: Doc): Doc {
  const out: Doc = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) {
      continue;
    }
    const current = out[key];
    out[key] = isObject(current) && isObject(value) ? deepMerge(current, value) : value;
  }
  return out;
}

/**
 * Loads the assistant (stored ones with their secrets opened; a squad's first member), then
 * merges the overrides; `variableValues` from all of them are collected, later ones winning.
 */
export async function resolveAssistant(
  store: Store,
  orgId: string,
  source: AssistantSource,
): Promise<ResolvedAssistant> {
  let base: Doc;
  const overrides = [...source.overrides];
  if (source.assistantId !== undefined) {
    base = await loadAssistant(store, orgId, source.assistantId);
  } else if (source.assistant !== undefined) {
    base = source.assistant;
  } else {
    const squad = source.squad ?? (await loadSquad(store, orgId, source.squadId ?? ''));
    const member = (Array.isArray(squad.members) ? squad.members[0] : undefined) as Doc | undefined;
    if (member === undefined) {
      throw badRequest('the squad has no members');
    }
    // A chat talks to the squad's first member; squad-wide overrides apply before the chat's own.
    if (typeof member.assistantId === 'string') {
      base = await loadAssistant(store, orgId, member.assistantId);
    } else if (isObject(member.assistant)) {
      base = member.assistant;
    } else {
      throw badRequest('the first squad member has no assistant');
    }
    const first = [member.assistantOverrides, squad.membersOverrides].filter(isObject);
    overrides.unshift(...first);
  }
  let assistant = base;
  let variables: Doc = {};
  for (const override of overrides) {
    const { variableValues, ...rest } = override;
    assistant = deepMerge(assistant, rest);
    if (isObject(variableValues)) {
      variables = deepMerge(variables, variableValues);
    }
  }
  return { assistant, variables };
}

async function loadSquad(store: Store, orgId: string, id: string): Promise<Doc> {
  const found = await store.resources.squads.getInternal(orgId, id);
  if (found === null) {
    throw badRequest(`squad with id ${id} not found`);
  }
  return found;
}

async function loadAssistant(store: Store, orgId: string, id: string): Promise<Doc> {
  const found = await store.resources.assistants.getInternal(orgId, id);
  if (found === null) {
    throw badRequest(`assistant with id ${id} not found`);
  }
  return found;
}

/** Built-in variables, as the platform offers them (UTC). */
export function defaultVariables(now: Date): Doc {
  const iso = now.toISOString();
  return {
    now: iso,
    date: iso.slice(0, 10),
    time: iso.slice(11, 16),
    year: String(now.getUTCFullYear()),
    month: String(now.getUTCMonth() + 1).padStart(2, '0'),
    day: String(now.getUTCDate()).padStart(2, '0'),
  };
}

/**
 * Replaces `{{name}}` (and dotted paths like `{{customer.name}}`) with values from `variables`.
 * Unknown names stay as written, so a missing variable is visible rather than silently empty.
 */
export function substituteVariables(text: string, variables: Doc): string {
  return text.replace(/\{\{\s*([A-Za-z_][\w.-]*)\s*\}\}/g, (whole, path: string) => {
    let value: unknown = variables;
    for (const part of path.split('.')) {
      value = isObject(value) ? value[part] : undefined;
    }
    if (value === undefined || value === null) {
      return whole;
    }
    return typeof value === 'string' ? value : JSON.stringify(value);
  });
}
