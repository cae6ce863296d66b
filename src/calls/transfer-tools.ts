/**
 * The tools a call runs itself (`transferCall`, `dtmf`) and the small readers the transfer
 * orchestration (call-transfer.ts) uses on tool calls and destinations.
 */
import type { Doc } from '../store/resource-store.js';

export const TRANSFER_CALL_TOOL = 'transferCall';
export const DTMF_TOOL = 'dtmf';

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** The type of a tool definition the model calls `name`, when it is one run here. */
export function localToolType(tools: readonly Doc[], name: string): 'transferCall' | 'dtmf' | null {
  for (const tool of tools) {
    const fn = isRecord(tool.function) ? tool.function : {};
    const type = tool.type;
    if (type !== TRANSFER_CALL_TOOL && type !== DTMF_TOOL) {
      continue;
    }
    // Without a function of its own a built-in tool is called by its type's name.
    const toolName = typeof fn.name === 'string' ? fn.name : type;
    if (toolName === name) {
      return type;
    }
  }
  return null;
}

export function toolNamed(tools: readonly Doc[], name: string): Doc | undefined {
  return tools.find((tool) => {
    const fn = isRecord(tool.function) ? tool.function : {};
    return (typeof fn.name === 'string' ? fn.name : tool.type) === name;
  });
}

export function parseArguments(json: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(json === '' ? '{}' : json);
    return isRecord(value) ? value : {};
  } catch {
    return {};
  }
}

/** Matches the final transcript of a spoken text (its {{variables}} may be anything). */
export function speechPattern(spoken: string): RegExp {
  const escape = (part: string): string =>
    part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\s+/g, '\\s+');
  const body = spoken
    .trim()
    .split(/\{\{[^}]*\}\}/)
    .map(escape)
    .join('[\\s\\S]*');
  return new RegExp(`^\\s*${body}\\s*$`);
}

export function describe(destination: Doc): string {
  const target = destination.number ?? destination.sipUri ?? destination.assistantName;
  return typeof target === 'string' ? target : 'the destination';
}
