/**
 * `call.analysis` after a call (assistant.analysisPlan): a summary, structured data (one plan and
 * the keyed `structuredDataMultiPlan`) and a success evaluation, each asked of the assistant's own
 * model provider with its own timeout. A plan that fails leaves its output out and adds an entry
 * to `analysis.errors` ({plan, code, message}); nothing here throws or waits past the timeouts.
 */
import type {
  ModelMessage,
  ModelProviderRegistry,
  ModelRequest,
} from '../../providers/llm/model-provider.js';
import type { Doc } from '../../store/resource-store.js';
import type { PipelineCallParams } from '../pipeline-call-params.js';
import { endpointFor, workerProviders } from '../worker-providers.js';

/** How the analysis reaches the assistant's model vendor. */
export interface AnalysisModelAccess {
  readonly models: ModelProviderRegistry;
  /** Key and endpoint for a provider in this call (the call's credentials, else the server's). */
  readonly endpoint: (provider: string) => { apiKey: string | null; baseUrl?: string };
}

/**
 * Model access from a call's params (vendor credentials and the server's settings), resolved as
 * the call's worker resolves them; null without params.
 */
export function modelAccessFor(
  params: Pick<PipelineCallParams, 'credentials' | 'providers'> | undefined,
): AnalysisModelAccess | null {
  if (params === undefined) {
    return null;
  }
  const call = params as PipelineCallParams; // endpointFor reads only these two fields
  return {
    models: workerProviders(params.providers).models,
    endpoint: (provider) => {
      const { apiKey, baseUrl } = endpointFor(provider, call);
      return { apiKey, ...(baseUrl === undefined ? {} : { baseUrl }) };
    },
  };
}

export interface AnalysisInput {
  /** The assistant as the call ran it. */
  readonly assistant: Doc;
  /** `AI: …` / `User: …` lines, whatever artifactPlan.transcriptPlan says. */
  readonly transcript: string;
  /** User and bot messages of the call (system and tool items not counted). */
  readonly spokenMessages: number;
  readonly endedReason: string;
}

export interface AnalysisUsage {
  readonly analysisType: 'summary' | 'structuredData' | 'successEvaluation';
  readonly model: { readonly provider: string; readonly model: string };
  readonly promptTokens: number;
  readonly completionTokens: number;
}

export interface AnalysisOutcome {
  readonly analysis: Doc;
  readonly usage: readonly AnalysisUsage[];
}

/** Stable codes of `analysis.errors[].code`. */
export type AnalysisErrorCode =
  'analysis-unavailable' | 'analysis-timeout' | 'analysis-model-failed' | 'analysis-invalid-output';

/** The platform's defaults (its AnalysisPlan schema). */
export const DEFAULT_MIN_MESSAGES_THRESHOLD = 2;
export const DEFAULT_ANALYSIS_TIMEOUT_SECONDS = 5;
const MIN_TIMEOUT_SECONDS = 1;
const MAX_TIMEOUT_SECONDS = 60;
const DEFAULT_MODEL = { provider: 'openai', model: 'gpt-4o-mini' };
/** Transcript characters put in a prompt (the end of a longer call is kept). */
const MAX_TRANSCRIPT_CHARS = 100_000;
/** Longest text kept from a reply. */
const MAX_OUTPUT_CHARS = 20_000;
const MAX_OUTPUT_TOKENS = 1000;
/** Most `structuredDataMultiPlan` entries run. */
const MAX_MULTI_PLANS = 10;

/** What each rubric asks the model to answer with (the platform's rubric names). */
const RUBRICS: Readonly<Record<string, string>> = {
  NumericScale: 'Answer with a single whole number from 1 (worst) to 10 (best).',
  DescriptiveScale: 'Answer with exactly one of: Excellent, Good, Fair, Poor.',
  Checklist: 'List the objectives inferred from the system prompt, each marked as met or not met.',
  Matrix: 'Rate several criteria, each on the levels Excellent, Good, Fair, Poor, as a grid.',
  PercentageScale: 'Answer with a single percentage from 0% to 100%.',
  LikertScale:
    'Answer with exactly one of: Strongly Agree, Agree, Neutral, Disagree, Strongly Disagree, to the statement "the call was successful".',
  AutomaticRubric:
    'Choose a few criteria that fit the call, score each one, and give the scores with their criteria.',
  PassFail: "Answer with exactly 'true' if the call passed or 'false' if it failed.",
};

const SUMMARY_PROMPT: readonly ModelMessage[] = [
  {
    role: 'system',
    content:
      'You write short call notes. You get the transcript of a phone call. Sum the call up in two or three sentences. Reply with the summary only.',
  },
  {
    role: 'user',
    content: 'Transcript:\n\n{{transcript}}\n\nWhy the call ended: {{endedReason}}',
  },
];

const STRUCTURED_DATA_PROMPT: readonly ModelMessage[] = [
  {
    role: 'system',
    content:
      'You extract data from call transcripts. Reply with one JSON value that follows this JSON Schema, and nothing else:\n\n{{schema}}\n\nThe system prompt of the AI in the call was:\n\n{{systemPrompt}}',
  },
  {
    role: 'user',
    content: 'Transcript:\n\n{{transcript}}\n\nWhy the call ended: {{endedReason}}',
  },
];

const SUCCESS_PROMPT: readonly ModelMessage[] = [
  {
    role: 'system',
    content:
      "You judge calls. You get the transcript of a call and the system prompt of the AI in it. Decide how well the call met the goals the system prompt implies. {{rubric}} Reply with the result only.\n\nThe AI's system prompt:\n\n{{systemPrompt}}",
  },
  {
    role: 'user',
    content: 'Transcript:\n\n{{transcript}}\n\nWhy the call ended: {{endedReason}}',
  },
];

function obj(value: unknown): Doc | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Doc)
    : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

class AnalysisFailure extends Error {
  constructor(
    readonly code: AnalysisErrorCode,
    message: string,
  ) {
    super(message);
  }
}

interface PlanRun {
  readonly plan: string;
  readonly analysisType: AnalysisUsage['analysisType'];
  readonly prompt: readonly ModelMessage[];
  readonly timeoutSeconds: unknown;
  /** Prompt variables of this plan (`rubric`, `schema`). */
  readonly variables?: Readonly<Record<string, string>>;
  /** Turns the reply's text into the stored value (throws AnalysisFailure when it cannot). */
  readonly parse: (text: string) => unknown;
  readonly store: (analysis: Doc, value: unknown) => void;
}

/** Runs the assistant's analysisPlan; `access` null means no model can be reached. */
export async function analyseCall(
  input: AnalysisInput,
  access: AnalysisModelAccess | null,
): Promise<AnalysisOutcome> {
  const plan = obj(input.assistant.analysisPlan) ?? {};
  const threshold =
    typeof plan.minMessagesThreshold === 'number' && Number.isFinite(plan.minMessagesThreshold)
      ? plan.minMessagesThreshold
      : DEFAULT_MIN_MESSAGES_THRESHOLD;
  const runs = planRuns(plan);
  if (runs.length === 0 || input.spokenMessages < threshold) {
    return { analysis: {}, usage: [] };
  }
  const model = obj(input.assistant.model) ?? {};
  const provider = str(model.provider) ?? DEFAULT_MODEL.provider;
  const modelName = str(model.model) ?? DEFAULT_MODEL.model;
  const adapter = access?.models.get(provider);
  const analysis: Doc = {};
  const errors: Doc[] = [];
  if (access === null || adapter === undefined) {
    const message =
      access === null
        ? 'no model provider is configured for call analysis'
        : `no model provider named "${provider}"`;
    for (const run of runs) {
      errors.push({ plan: run.plan, code: 'analysis-unavailable', message });
    }
    return { analysis: { errors }, usage: [] };
  }
  const endpoint = access.endpoint(provider);
  const baseUrl =
    provider === 'custom-llm' && typeof model.url === 'string' ? model.url : endpoint.baseUrl;
  const variables: Record<string, string> = {
    transcript: input.transcript.slice(-MAX_TRANSCRIPT_CHARS),
    endedReason: input.endedReason,
    systemPrompt: systemPromptOf(model),
  };
  const usage: AnalysisUsage[] = [];
  await Promise.all(
    runs.map(async (run) => {
      const timeoutMs = timeoutSecondsOf(run.timeoutSeconds) * 1000;
      const request: ModelRequest = {
        model: modelName,
        messages: run.prompt.map((message) => ({
          role: message.role,
          content: fill(message.content ?? '', { ...variables, ...run.variables }),
        })),
        temperature: 0,
        maxTokens: MAX_OUTPUT_TOKENS,
        apiKey: endpoint.apiKey,
        ...(baseUrl === undefined ? {} : { baseUrl }),
      };
      const signal = AbortSignal.timeout(timeoutMs);
      let text = '';
      let promptTokens = 0;
      let completionTokens = 0;
      try {
        for await (const event of adapter.stream(request, signal)) {
          if (event.type === 'text' && text.length < MAX_OUTPUT_CHARS) {
            text += event.delta;
          } else if (event.type === 'usage') {
            promptTokens += event.promptTokens;
            completionTokens += event.completionTokens;
          }
        }
        run.store(analysis, run.parse(text.slice(0, MAX_OUTPUT_CHARS).trim()));
      } catch (error) {
        errors.push(failure(run.plan, error, signal.aborted, timeoutMs));
      }
      if (promptTokens > 0 || completionTokens > 0) {
        usage.push({
          analysisType: run.analysisType,
          model: { provider, model: modelName },
          promptTokens,
          completionTokens,
        });
      }
    }),
  );
  if (errors.length > 0) {
    errors.sort(
      (a, b) => runs.findIndex((r) => r.plan === a.plan) - runs.findIndex((r) => r.plan === b.plan),
    );
    analysis.errors = errors;
  }
  return { analysis, usage };
}

function failure(plan: string, error: unknown, timedOut: boolean, timeoutMs: number): Doc {
  if (error instanceof AnalysisFailure) {
    return { plan, code: error.code, message: error.message };
  }
  if (timedOut) {
    return {
      plan,
      code: 'analysis-timeout',
      message: `no answer from the model within ${timeoutMs / 1000} s`,
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { plan, code: 'analysis-model-failed', message: message.slice(0, 1000) };
}

/** The plans to run, in a fixed order (summary, structured data, multi, success evaluation). */
function planRuns(plan: Doc): PlanRun[] {
  const runs: PlanRun[] = [];
  const summary = obj(plan.summaryPlan) ?? {};
  if (summary.enabled !== false) {
    runs.push({
      plan: 'summary',
      analysisType: 'summary',
      prompt: promptOf(summary.messages, SUMMARY_PROMPT),
      timeoutSeconds: summary.timeoutSeconds,
      parse: (text) => nonEmpty(text),
      store: (analysis, value) => {
        analysis.summary = value;
      },
    });
  }
  const structured = obj(plan.structuredDataPlan);
  if (structured?.enabled === true) {
    runs.push(
      structuredRun('structuredData', structured, (analysis, value) => {
        analysis.structuredData = value;
      }),
    );
  }
  const multi = Array.isArray(plan.structuredDataMultiPlan) ? plan.structuredDataMultiPlan : [];
  for (const entry of multi.slice(0, MAX_MULTI_PLANS)) {
    const key = str(obj(entry)?.key);
    const entryPlan = obj(obj(entry)?.plan);
    if (key === undefined || entryPlan === undefined || entryPlan.enabled === false) {
      continue;
    }
    runs.push(
      structuredRun(`structuredDataMulti.${key}`, entryPlan, (analysis, value) => {
        const list = (analysis.structuredDataMulti ??= []) as Doc[];
        list.push({ key, structuredData: value });
      }),
    );
  }
  const success = obj(plan.successEvaluationPlan) ?? {};
  if (success.enabled !== false) {
    const rubric = str(success.rubric) ?? 'PassFail';
    runs.push({
      plan: 'successEvaluation',
      analysisType: 'successEvaluation',
      prompt: promptOf(success.messages, SUCCESS_PROMPT),
      variables: { rubric: RUBRICS[rubric] ?? '' },
      timeoutSeconds: success.timeoutSeconds,
      parse: (text) => nonEmpty(text),
      store: (analysis, value) => {
        analysis.successEvaluation = value;
      },
    });
  }
  return runs;
}

function structuredRun(
  name: string,
  plan: Doc,
  store: (analysis: Doc, value: unknown) => void,
): PlanRun {
  const schema = obj(plan.schema);
  return {
    plan: name,
    analysisType: 'structuredData',
    prompt: promptOf(plan.messages, STRUCTURED_DATA_PROMPT),
    variables: { schema: JSON.stringify(schema ?? { type: 'object' }) },
    timeoutSeconds: plan.timeoutSeconds,
    parse: (text) => parseStructured(text, schema),
    store,
  };
}

/** The reply as JSON (a fenced block is unwrapped); its top-level type must match the schema's. */
function parseStructured(text: string, schema: Doc | undefined): unknown {
  const fenced = /^```(?:json)?\s*([\s\S]*?)\s*```$/i.exec(text);
  let value: unknown;
  try {
    value = JSON.parse(fenced?.[1] ?? text) as unknown;
  } catch {
    throw new AnalysisFailure('analysis-invalid-output', 'the model did not answer with JSON');
  }
  const type = str(schema?.type) ?? 'object';
  const actual = Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value;
  const matches =
    type === actual ||
    (type === 'integer' && Number.isInteger(value)) ||
    (type === 'number' && actual === 'number');
  if (!matches) {
    throw new AnalysisFailure(
      'analysis-invalid-output',
      `the model answered with ${actual} JSON where the schema wants ${type}`,
    );
  }
  return value;
}

function nonEmpty(text: string): string {
  if (text === '') {
    throw new AnalysisFailure('analysis-invalid-output', 'the model answered with no text');
  }
  return text;
}

/** The plan's own messages (`{role, content}` with string content), else the default prompt. */
function promptOf(messages: unknown, fallback: readonly ModelMessage[]): readonly ModelMessage[] {
  if (!Array.isArray(messages)) {
    return fallback;
  }
  const own: ModelMessage[] = [];
  for (const message of messages) {
    const item = obj(message);
    const role = item?.role;
    if (
      (role === 'system' || role === 'user' || role === 'assistant') &&
      typeof item?.content === 'string'
    ) {
      own.push({ role, content: item.content });
    }
  }
  return own.length > 0 ? own : fallback;
}

/**
 * Replaces `{{transcript}}`, `{{systemPrompt}}`, `{{endedReason}}`, `{{rubric}}`, `{{schema}}`;
 * other names stay as written.
 */
function fill(text: string, variables: Readonly<Record<string, string>>): string {
  return text.replace(/\{\{\s*([A-Za-z]+)\s*\}\}/g, (whole, name: string) =>
    Object.prototype.hasOwnProperty.call(variables, name) ? variables[name]! : whole,
  );
}

function systemPromptOf(model: Doc): string {
  const messages = Array.isArray(model.messages) ? model.messages : [];
  for (const message of messages) {
    const item = obj(message);
    if (item?.role === 'system' && typeof item.content === 'string') {
      return item.content;
    }
  }
  return '';
}

function timeoutSecondsOf(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    return DEFAULT_ANALYSIS_TIMEOUT_SECONDS;
  }
  return Math.min(MAX_TIMEOUT_SECONDS, Math.max(MIN_TIMEOUT_SECONDS, value));
}
