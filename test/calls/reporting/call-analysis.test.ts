import { describe, expect, it } from 'vitest';
import {
  analyseCall,
  type AnalysisInput,
  type AnalysisModelAccess,
} from '../../../src/calls/reporting/call-analysis.js';
import { createModelRegistry } from '../../../src/providers/llm/registry.js';
import type { Doc } from '../../../src/store/resource-store.js';
import { useFakeVendor } from '../../support/fake-openai-server.js';

const { fake } = useFakeVendor('sk-analysis');

function access(): AnalysisModelAccess {
  return {
    models: createModelRegistry({ openaiBaseUrl: fake.url, openaiApiKey: '' }),
    endpoint: () => ({ apiKey: 'sk-call', baseUrl: fake.url }),
  };
}

const TRANSCRIPT = 'AI: Hello, this is the restaurant.\nUser: A table for two tonight, please.';

function input(assistant: Doc, spokenMessages = 2): AnalysisInput {
  return {
    assistant: {
      model: {
        provider: 'openai',
        model: 'gpt-4o-mini',
        messages: [{ role: 'system', content: 'You take table bookings.' }],
      },
      ...assistant,
    },
    transcript: TRANSCRIPT,
    spokenMessages,
    endedReason: 'customer-ended-call',
  };
}

/** The text of the request whose system prompt contains `marker`. */
function requestWith(marker: string): string {
  const request = fake.requests.find((r) => JSON.stringify(r.body?.messages).includes(marker));
  expect(request, `a request containing ${marker}`).toBeDefined();
  return JSON.stringify(request!.body);
}

describe('analyseCall', () => {
  it('runs the default summary and pass/fail evaluation on the assistant model', async () => {
    fake.fallback = (request) => {
      const system = JSON.stringify(request.body?.messages?.[0]?.content ?? '');
      return system.includes('You judge calls')
        ? { chunks: ['true'], usage: { prompt_tokens: 50, completion_tokens: 1 } }
        : {
            chunks: ['The caller booked ', 'a table for two.'],
            usage: { prompt_tokens: 40, completion_tokens: 8 },
          };
    };
    const outcome = await analyseCall(input({}), access());
    expect(outcome.analysis).toEqual({
      summary: 'The caller booked a table for two.',
      successEvaluation: 'true',
    });
    expect([...outcome.usage].sort((a, b) => a.analysisType.localeCompare(b.analysisType))).toEqual(
      [
        {
          analysisType: 'successEvaluation',
          model: { provider: 'openai', model: 'gpt-4o-mini' },
          promptTokens: 50,
          completionTokens: 1,
        },
        {
          analysisType: 'summary',
          model: { provider: 'openai', model: 'gpt-4o-mini' },
          promptTokens: 40,
          completionTokens: 8,
        },
      ],
    );
    expect(fake.requests).toHaveLength(2);
    // The call's key, its model, the transcript, the ended reason and the system prompt go out.
    expect(fake.requests[0]!.headers.authorization).toBe('Bearer sk-call');
    expect(fake.requests[0]!.body?.model).toBe('gpt-4o-mini');
    const evaluation = requestWith('You judge calls');
    expect(evaluation).toContain('You take table bookings.');
    expect(evaluation).toContain("exactly 'true'");
    expect(evaluation).toContain('A table for two tonight');
    expect(requestWith('call notes')).toContain('customer-ended-call');
  });

  it('uses the plan prompts, extracts structured data and honours enabled and the threshold', async () => {
    fake.fallback = (request) => {
      const text = JSON.stringify(request.body?.messages);
      if (text.includes('EXTRACT')) {
        return { chunks: ['```json\n{"guests": 2, ', '"time": "tonight"}\n```'] };
      }
      if (text.includes('GRADE')) {
        return { chunks: ['8'] };
      }
      return { chunks: ['Multi'] };
    };
    const schema = {
      type: 'object',
      properties: { guests: { type: 'number' }, time: { type: 'string' } },
    };
    const outcome = await analyseCall(
      input({
        analysisPlan: {
          summaryPlan: { enabled: false },
          structuredDataPlan: {
            enabled: true,
            schema,
            messages: [{ role: 'system', content: 'EXTRACT per {{schema}} from: {{transcript}}' }],
          },
          structuredDataMultiPlan: [
            {
              key: 'count',
              plan: {
                enabled: true,
                schema: { type: 'number' },
                messages: [{ role: 'user', content: 'COUNT {{transcript}}' }],
              },
            },
          ],
          successEvaluationPlan: {
            rubric: 'NumericScale',
            messages: [{ role: 'system', content: 'GRADE {{rubric}} {{systemPrompt}}' }],
          },
        },
      }),
      access(),
    );
    expect(outcome.analysis.summary).toBeUndefined();
    expect(outcome.analysis.structuredData).toEqual({ guests: 2, time: 'tonight' });
    expect(outcome.analysis.successEvaluation).toBe('8');
    // The multi plan wants a number; "Multi" is not JSON.
    expect(outcome.analysis.structuredDataMulti).toBeUndefined();
    expect(outcome.analysis.errors).toEqual([
      {
        plan: 'structuredDataMulti.count',
        code: 'analysis-invalid-output',
        message: 'the model did not answer with JSON',
      },
    ]);
    const extract = requestWith('EXTRACT');
    expect(extract).toContain('\\"guests\\"');
    expect(extract).toContain('A table for two tonight');
    expect(requestWith('GRADE')).toContain('1 (worst) to 10 (best)');
    expect(requestWith('GRADE')).toContain('You take table bookings.');

    fake.reset();
    const skipped = await analyseCall(
      input({ analysisPlan: { minMessagesThreshold: 3 } }),
      access(),
    );
    expect(skipped).toEqual({ analysis: {}, usage: [] });
    expect(fake.requests).toHaveLength(0);
  });

  it('gives each failing plan a coded error and never waits past its timeout', async () => {
    fake.fallback = (request) =>
      JSON.stringify(request.body?.messages).includes('You judge calls')
        ? { status: 500, errorMessage: 'model exploded' }
        : { delayMs: 20_000, chunks: ['late'] };
    const startedMs = Date.now();
    const outcome = await analyseCall(
      input({ analysisPlan: { summaryPlan: { timeoutSeconds: 1 } } }),
      access(),
    );
    // Far below the model's 20 s: the 1 s timeout ended the wait (generous margin for load).
    expect(Date.now() - startedMs).toBeLessThan(15_000);
    expect(outcome.analysis.summary).toBeUndefined();
    const errors = outcome.analysis.errors as Doc[];
    expect(errors.map((e) => [e.plan, e.code])).toEqual([
      ['summary', 'analysis-timeout'],
      ['successEvaluation', 'analysis-model-failed'],
    ]);
    expect(errors[0]!.message).toBe('no answer from the model within 1 s');
    expect(String(errors[1]!.message)).toContain('model exploded');
  });

  it('says analysis is unavailable when the provider is unknown or no access is given', async () => {
    const unknown = await analyseCall(
      input({ model: { provider: 'no-such-vendor', model: 'x' } }),
      access(),
    );
    expect(unknown.analysis.errors).toEqual([
      {
        plan: 'summary',
        code: 'analysis-unavailable',
        message: 'no model provider named "no-such-vendor"',
      },
      {
        plan: 'successEvaluation',
        code: 'analysis-unavailable',
        message: 'no model provider named "no-such-vendor"',
      },
    ]);
    const none = await analyseCall(input({}), null);
    expect((none.analysis.errors as Doc[]).map((e) => e.code)).toEqual([
      'analysis-unavailable',
      'analysis-unavailable',
    ]);
    expect(fake.requests).toHaveLength(0);
  });
});
