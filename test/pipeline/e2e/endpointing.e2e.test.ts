import { describe, expect, it } from 'vitest';
import type { StartSpeakingPlanInput } from '../../../src/pipeline/plans.js';
import { useFakeVendors, wav, type VendorOverrides } from './support/fake-vendors.js';
import { FRAME_MS, RATE_HZ, type RealtimeDriver } from './support/realtime-driver.js';

/*
 * Each startSpeakingPlan rule, end to end in real time: espeak-ng speech, the energy VAD, the
 * custom-transcriber adapter (a transcriber without its own end-of-turn signal, so the plan
 * decides) against the fake transcriber server, the OpenAI adapter and ElevenLabs.
 *
 * The end-of-turn delay is measured from the end of the caller's audio (the last frame of the
 * WAV, whose last 100 ms are silence) to the `conversation-update` that adds their words. The
 * vendor's transcript is timed to arrive in the middle of the speech, so the wait counts from
 * the moment the VAD heard the speech stop; the VAD confirms a stop only after 500 ms of quiet
 * (its default), so waits shorter than that end the turn at that confirmation. Only generous
 * bounds around the configured wait and the ordering of differently configured calls are
 * asserted. Calls compared with each other run side by side, each with its own transcriber
 * connection.
 */

const vendors = useFakeVendors();

/** Silence before the caller speaks. */
const LEAD_MS = 400;
/** Slack above a configured wait: transcript and tick lateness on a loaded machine. */
const SLACK_MS = 600;
/** How long the default VAD waits in quiet before it confirms a stop (vad-state-machine.ts). */
const VAD_STOP_MS = 500;
/** The fixtures' trailing silence, and some for a quiet last phoneme the VAD does not count. */
const TAIL_MS = 250;

interface Turn {
  readonly fixture: string;
  /** What the fake transcriber server says it heard (one final, mid-speech). */
  readonly transcript: string;
  readonly startSpeakingPlan: StartSpeakingPlanInput;
  readonly pipeline?: VendorOverrides;
}

interface Measured {
  readonly driver: RealtimeDriver;
  readonly delay: Promise<number>;
}

/**
 * Starts a call in which the caller says `fixture` after LEAD_MS; the fake transcriber answers
 * with `transcript` halfway through it. Resolves once the transcriber is connected (so the next
 * call can be given other transcripts); `delay` resolves with the end-of-turn delay.
 */
async function startTurn(turn: Turn): Promise<Measured> {
  const speech = wav(turn.fixture);
  const midSpeechMs = LEAD_MS + (speech.length / RATE_HZ) * 500;
  vendors.custom.transcripts = [turn.transcript];
  vendors.custom.bytesPerReply = Math.round((midSpeechMs * RATE_HZ * 2) / 1000);
  const driver = vendors.driver({
    transcriber: { provider: 'custom-transcriber', server: { url: vendors.custom.url } },
    startSpeakingPlan: turn.startSpeakingPlan,
    ...turn.pipeline,
  });
  const connections = vendors.custom.connections.length;
  void driver.play(new Int16Array((LEAD_MS * RATE_HZ) / 1000));
  const audioEnd = driver.play(speech);
  driver.start();
  await driver.waitFor('transcriber connection', () => {
    return vendors.custom.connections.length > connections;
  });
  return { driver, delay: endOfTurnDelay(driver, turn.transcript, audioEnd) };
}

async function endOfTurnDelay(
  driver: RealtimeDriver,
  transcript: string,
  audioEnd: Promise<number>,
): Promise<number> {
  const update = await driver.next('conversation-update', (e) =>
    e.messages.some((m) => m.role === 'user' && m.content === transcript),
  );
  const endMs = await audioEnd;
  const heard = driver
    .eventsOf('transcript')
    .find((e) => e.role === 'user' && e.transcript === transcript);
  if (heard === undefined) {
    throw new Error(`no transcript before the turn: ${driver.describe()}`);
  }
  // The premise of every measurement: the words were in before the caller stopped.
  expect(heard.atMs).toBeLessThan(endMs - TAIL_MS);
  return update.atMs - endMs;
}

/** Starts the calls one after the other (each needs its own transcripts), then measures all. */
async function measure(...turns: Turn[]): Promise<number[]> {
  const started: Measured[] = [];
  for (const turn of turns) {
    started.push(await startTurn(turn));
  }
  return Promise.all(started.map((call) => call.delay));
}

/** The turn ended `waitMs` after the speech stopped, give or take the bounds above. */
function expectWait(delayMs: number, waitMs: number): void {
  expect(delayMs).toBeGreaterThanOrEqual(Math.max(waitMs, VAD_STOP_MS) - TAIL_MS - FRAME_MS);
  expect(delayMs).toBeLessThan(Math.max(waitMs, VAD_STOP_MS) + SLACK_MS);
}

describe('pipeline end to end: startSpeakingPlan endpointing rules', () => {
  it('transcriptionEndpointingPlan: punctuation, number and no punctuation each wait as set', async () => {
    const plan: StartSpeakingPlanInput = {
      transcriptionEndpointingPlan: {
        onPunctuationSeconds: 0.1,
        onNumberSeconds: 1.1,
        onNoPunctuationSeconds: 2.2,
      },
    };
    const [punctuation, number, noPunctuation] = await measure(
      { fixture: 'm2-great-bye', transcript: 'Great, bye.', startSpeakingPlan: plan },
      {
        fixture: 'speech/account-number',
        transcript: 'My account number is 427',
        startSpeakingPlan: plan,
      },
      { fixture: 'm2-hold-on', transcript: 'hold on a second', startSpeakingPlan: plan },
    );
    expectWait(punctuation!, 100);
    expectWait(number!, 1100);
    expectWait(noPunctuation!, 2200);
    expect(number! - punctuation!).toBeGreaterThan(300);
    expect(noPunctuation! - number!).toBeGreaterThan(600);
  });

  it('a customer customEndpointingRule overrides the plan when its regex matches', async () => {
    const plan: StartSpeakingPlanInput = {
      transcriptionEndpointingPlan: { onPunctuationSeconds: 0.1 },
      customEndpointingRules: [
        {
          type: 'customer',
          regex: 'account number',
          regexOptions: [{ type: 'ignore-case', enabled: true }],
          timeoutSeconds: 1.5,
        },
      ],
    };
    const [matching, other] = await measure(
      {
        fixture: 'speech/account-number',
        transcript: 'My Account Number is four two seven.',
        startSpeakingPlan: plan,
      },
      { fixture: 'm2-great-bye', transcript: 'Great, bye.', startSpeakingPlan: plan },
    );
    expectWait(matching!, 1500);
    expectWait(other!, 100);
    expect(matching! - other!).toBeGreaterThan(800);
  });

  it('an assistant customEndpointingRule matches the last thing the assistant said', async () => {
    const rule = {
      startSpeakingPlan: {
        transcriptionEndpointingPlan: { onPunctuationSeconds: 0.1 },
        customEndpointingRules: [
          { type: 'assistant', regex: 'account number\\?$', timeoutSeconds: 1.5 },
        ],
      },
    };
    const asked = (firstMessage: string): VendorOverrides => ({
      firstMessage,
      firstMessageMode: 'assistant-speaks-first',
    });
    const [afterQuestion, afterGreeting] = await measure(
      {
        fixture: 'speech/account-number',
        transcript: 'My account number is four two seven.',
        ...rule,
        pipeline: asked('What is your account number?'),
      },
      {
        fixture: 'speech/account-number',
        transcript: 'My account number is four two seven.',
        ...rule,
        pipeline: asked('Hello, how can I help?'),
      },
    );
    expectWait(afterQuestion!, 1500);
    expectWait(afterGreeting!, 100);
    expect(afterQuestion! - afterGreeting!).toBeGreaterThan(800);
  });

  it('smartEndpointingPlan vapi: a question is answered sooner than a trailing "and"', async () => {
    const plan: StartSpeakingPlanInput = { smartEndpointingPlan: { provider: 'vapi' } };
    const [question, trailing] = await measure(
      {
        fixture: 'f2-opening-hours',
        transcript: 'Can you tell me your opening hours on Sunday?',
        startSpeakingPlan: plan,
      },
      {
        fixture: 'm2-change-address',
        transcript: 'I need to change my delivery address and',
        startSpeakingPlan: plan,
      },
    );
    // Parla's vapi heuristic: 150 ms after a question, 2000 ms after a conjunction.
    expectWait(question!, 150);
    expectWait(trailing!, 2000);
    expect(trailing! - question!).toBeGreaterThan(1000);
  });

  it('smartEndpointingPlan livekit: the wait function of the still-speaking estimate', async () => {
    const plan: StartSpeakingPlanInput = {
      smartEndpointingPlan: { provider: 'livekit', waitFunction: '100 + 1900 * x' },
    };
    const [complete, trailing] = await measure(
      { fixture: 'm2-great-bye', transcript: 'Great, bye.', startSpeakingPlan: plan },
      {
        fixture: 'm2-change-address',
        transcript: 'I need to change my delivery address and',
        startSpeakingPlan: plan,
      },
    );
    expect(complete!).toBeGreaterThanOrEqual(VAD_STOP_MS - TAIL_MS - FRAME_MS);
    expect(trailing!).toBeLessThan(2000 + SLACK_MS);
    expect(trailing! - complete!).toBeGreaterThan(600);
  });
});
