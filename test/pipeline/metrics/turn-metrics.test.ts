import { describe, expect, it } from 'vitest';
import { TurnMetrics } from '../../../src/pipeline/metrics/turn-metrics.js';

describe('TurnMetrics', () => {
  it('measures each stage of a turn from its own start', () => {
    const metrics = new TurnMetrics();
    metrics.markCallerAudioEnd(1000);
    metrics.markSpeechStopDecided(1100);
    metrics.markTranscriptFinal(1120);
    metrics.markEndOfTurn(1150);
    metrics.markModelRequest(1151);
    metrics.markModelFirstToken(1400);
    metrics.markModelFirstToken(1450); // only the first counts
    metrics.markVoiceRequest(1420);
    metrics.markVoiceFirstByte(1600);
    const turn = metrics.markAssistantAudioOut(1610);
    expect(turn).toEqual({
      turn: 0,
      endpointingMs: 150,
      transcriberFinalisationMs: 120,
      modelFirstTokenMs: 249,
      voiceFirstByteMs: 180,
      voiceToVoiceMs: 610,
      vadStopMs: 100,
      toModelRequestMs: 151,
      toVoiceFirstByteMs: 600,
    });
    expect(metrics.markAssistantAudioOut(1700)).toBeNull();
  });

  it('abandons a turn when the caller resumes, and leaves absent stages null', () => {
    const metrics = new TurnMetrics();
    metrics.markCallerAudioEnd(0);
    metrics.markEndOfTurn(100);
    metrics.markCallerSpeechResumed();
    expect(metrics.markAssistantAudioOut(200)).toBeNull();
    metrics.markCallerAudioEnd(500);
    const turn = metrics.markAssistantAudioOut(900);
    expect(turn).toMatchObject({
      turn: 0,
      endpointingMs: null,
      modelFirstTokenMs: null,
      voiceToVoiceMs: 400,
    });
  });

  it('summarises percentiles by nearest rank', () => {
    const metrics = new TurnMetrics();
    for (let i = 1; i <= 100; i += 1) {
      metrics.markCallerAudioEnd(i * 1000);
      metrics.markAssistantAudioOut(i * 1000 + i);
    }
    expect(metrics.summary('voiceToVoiceMs')).toEqual({ count: 100, p50: 50, p95: 95, p99: 99 });
    expect(metrics.summary('modelFirstTokenMs')).toBeNull();
  });
});
