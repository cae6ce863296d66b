/**
 * Parla's own record of calls the harness did not place itself (SIPp's): the stored calls of a
 * phone number whose caller number matches, read through the control API once they have ended,
 * with the per-turn latency breakdown of each (`artifact.performanceMetrics.turnLatencies`).
 */
import { HarnessError } from './caller-transport.js';
import { stageRecord } from './stage-record.js';

export interface StoredCallsQuery {
  baseUrl: string;
  apiKey: string;
  phoneNumberId: string;
  /** Which calls count, by the caller number Parla stored. */
  callerNumber: (number: string) => boolean;
  /** Wait until this many matching calls have ended (or `waitMs` has passed). */
  expectedCalls: number;
  waitMs: number;
}

export interface StoredCalls {
  /** Matching calls found, and how many of them had ended. */
  calls: number;
  ended: number;
  endedReasons: Record<string, number>;
  /** Every timed turn of every ended call (ms by stage: turnLatency, modelLatency, …). */
  turnStages: Record<string, number>[];
}

const PAGE = 1000;
const MAX_PAGES = 50;
const MAX_RESPONSE_BYTES = 64_000_000;

export async function readStoredCalls(query: StoredCallsQuery): Promise<StoredCalls> {
  const deadline = Date.now() + query.waitMs;
  for (;;) {
    const calls = (await listCalls(query)).filter((call) => {
      const customer = call.customer;
      return isObject(customer) && typeof customer.number === 'string'
        ? query.callerNumber(customer.number)
        : false;
    });
    const ended = calls.filter((call) => call.status === 'ended' && isObject(call.artifact));
    if (ended.length >= query.expectedCalls || Date.now() > deadline) {
      const endedReasons: Record<string, number> = {};
      for (const call of ended) {
        const reason = String(call.endedReason);
        endedReasons[reason] = (endedReasons[reason] ?? 0) + 1;
      }
      return {
        calls: calls.length,
        ended: ended.length,
        endedReasons,
        turnStages: ended.flatMap((call) => turnStagesOf(call.artifact)),
      };
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Every call of the phone number, newest first, a page of 1000 at a time. */
async function listCalls(query: StoredCallsQuery): Promise<Record<string, unknown>[]> {
  const base = query.baseUrl.replace(/\/+$/, '');
  const seen = new Map<string, Record<string, unknown>>();
  let before: string | null = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const url =
      `${base}/call?phoneNumberId=${encodeURIComponent(query.phoneNumberId)}&limit=${PAGE}` +
      (before === null ? '' : `&createdAtLt=${encodeURIComponent(before)}`);
    const response = await fetch(url, {
      headers: { authorization: `Bearer ${query.apiKey}` },
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    if (!response.ok || text.length > MAX_RESPONSE_BYTES) {
      throw new HarnessError(
        'ERR_BENCH_PROTOCOL',
        `GET /call answered ${response.status} (${text.length} bytes)`,
      );
    }
    const list: unknown = JSON.parse(text);
    if (!Array.isArray(list)) {
      throw new HarnessError('ERR_BENCH_PROTOCOL', 'GET /call did not answer a list');
    }
    for (const call of list) {
      if (isObject(call) && typeof call.id === 'string') {
        seen.set(call.id, call);
      }
    }
    const last: unknown = list[list.length - 1];
    if (list.length < PAGE || !isObject(last) || typeof last.createdAt !== 'string') {
      break;
    }
    before = last.createdAt;
  }
  return [...seen.values()];
}

function turnStagesOf(artifact: unknown): Record<string, number>[] {
  const metrics = isObject(artifact) ? artifact.performanceMetrics : undefined;
  const turns = isObject(metrics) ? metrics.turnLatencies : undefined;
  return Array.isArray(turns)
    ? turns
        .map((entry) => stageRecord(entry))
        .filter((stages): stages is Record<string, number> => stages !== null)
    : [];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
