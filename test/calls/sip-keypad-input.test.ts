import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { KeypadInput, keypadInputPlanOf } from '../../src/calls/sip-keypad-input.js';

describe('keypad input', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('reads the plan with the platform defaults', () => {
    expect(keypadInputPlanOf({})).toEqual({ enabled: false, timeoutMs: 2000, delimiters: ['#'] });
    expect(
      keypadInputPlanOf({
        keypadInputPlan: { enabled: true, timeoutSeconds: 0.5, delimiters: ['*', '#'] },
      }),
    ).toEqual({ enabled: true, timeoutMs: 500, delimiters: ['*', '#'] });
  });

  it('sends the digits at a delimiter or after the timeout', () => {
    const inputs: string[] = [];
    const keypad = new KeypadInput(
      keypadInputPlanOf({ keypadInputPlan: { enabled: true, timeoutSeconds: 1 } }),
      (digits) => inputs.push(digits),
    );
    for (const digit of '123#') {
      keypad.digit(digit);
    }
    expect(inputs).toEqual(['123']);
    keypad.digit('4');
    vi.advanceTimersByTime(900);
    keypad.digit('5');
    vi.advanceTimersByTime(900);
    expect(inputs).toEqual(['123']);
    vi.advanceTimersByTime(100);
    expect(inputs).toEqual(['123', '45']);
    keypad.digit('#');
    expect(inputs).toEqual(['123', '45']);
  });

  it('ignores digits when the plan is off, and forgets them on close', () => {
    const inputs: string[] = [];
    new KeypadInput(keypadInputPlanOf({}), (digits) => inputs.push(digits)).digit('1');
    const keypad = new KeypadInput(
      keypadInputPlanOf({ keypadInputPlan: { enabled: true } }),
      (digits) => inputs.push(digits),
    );
    keypad.digit('2');
    keypad.close();
    vi.advanceTimersByTime(5000);
    expect(inputs).toEqual([]);
  });
});
