/**
 * What the reporter builds from a call's timeline: the live artifact (messages, transcript,
 * metrics) and, once the call ended, its analysis per the assistant's analysisPlan.
 */
import type { Doc } from '../../store/resource-store.js';
import type { PipelineCallParams } from '../pipeline-call-params.js';
import { analyseCall, modelAccessFor, type AnalysisUsage } from './call-analysis.js';
import type { CallTimeline, TranscriptNames } from './call-timeline.js';

function obj(value: unknown): Doc | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Doc)
    : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** The artifact as it stands: messages in both forms, transcript per the transcriptPlan. */
export function liveArtifact(
  timeline: CallTimeline,
  assistant: Doc,
  variableValues: Doc | undefined,
): Doc {
  const plan = obj(obj(assistant.artifactPlan)?.transcriptPlan);
  const names: TranscriptNames = {
    enabled: plan?.enabled !== false,
    assistantName: str(plan?.assistantName) ?? 'AI',
    userName: str(plan?.userName) ?? 'User',
  };
  return {
    messages: timeline.messages(),
    messagesOpenAIFormatted: timeline.openAIMessages(),
    transcript: timeline.transcript(names),
    performanceMetrics: timeline.performanceMetrics(),
    variableValues: { ...(variableValues ?? {}) },
  };
}

/** The analysisPlan's results (bounded by its timeouts; failures are in `errors`). */
export async function analyseTimeline(
  timeline: CallTimeline,
  assistant: Doc,
  callParams: Pick<PipelineCallParams, 'credentials' | 'providers'> | undefined,
  endedReason: string,
): Promise<{ analysis: Doc; usage: readonly AnalysisUsage[] }> {
  try {
    const spoken = timeline
      .messages()
      .filter((item) => item.role === 'user' || item.role === 'bot').length;
    return await analyseCall(
      {
        assistant,
        transcript: timeline.transcript({ enabled: true, assistantName: 'AI', userName: 'User' }),
        spokenMessages: spoken,
        endedReason,
      },
      modelAccessFor(callParams),
    );
  } catch (error) {
    return {
      analysis: {
        errors: [{ plan: 'all', code: 'analysis-model-failed', message: String(error) }],
      },
      usage: [],
    };
  }
}
