/** The assistant's `keypadInputPlan`, with the platform's defaults. */
export interface KeypadInputPlan {
  readonly enabled: boolean;
  readonly timeoutMs: number;
  readonly delimiters: readonly string[];
}

/** Digits kept at most before they are sent regardless (a stuck key, a flood). */
const MAX_DIGITS = 64;
const DEFAULT_TIMEOUT_SECONDS = 2;

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Reads `assistant.keypadInputPlan`: off unless enabled, 2 s timeout, `#` ends the input. */
export function keypadInputPlanOf(assistant: Readonly<Record<string, unknown>>): KeypadInputPlan {
  const plan = isObject(assistant.keypadInputPlan) ? assistant.keypadInputPlan : {};
  const seconds =
    typeof plan.timeoutSeconds === 'number' && plan.timeoutSeconds >= 0 && plan.timeoutSeconds <= 10
      ? plan.timeoutSeconds
      : DEFAULT_TIMEOUT_SECONDS;
  const raw = plan.delimiters ?? '#';
  const delimiters = (Array.isArray(raw) ? raw : [raw]).filter(
    (value): value is string => typeof value === 'string' && value.length === 1,
  );
  return { enabled: plan.enabled === true, timeoutMs: seconds * 1000, delimiters };
}

/**
 * Collects DTMF digits into one user input: sent when a delimiter is pressed (the delimiter is
 * left out) or when no digit came for `timeoutMs` (a timeout of 0 sends each digit at once).
 */
export class KeypadInput {
  private digits = '';
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly plan: KeypadInputPlan,
    private readonly onInput: (digits: string) => void,
  ) {}

  digit(digit: string): void {
    if (!this.plan.enabled) {
      return;
    }
    this.clearTimer();
    if (this.plan.delimiters.includes(digit)) {
      this.flush();
      return;
    }
    this.digits += digit;
    if (this.plan.timeoutMs === 0 || this.digits.length >= MAX_DIGITS) {
      this.flush();
      return;
    }
    this.timer = setTimeout(() => this.flush(), this.plan.timeoutMs);
    this.timer.unref();
  }

  close(): void {
    this.clearTimer();
    this.digits = '';
  }

  private flush(): void {
    this.clearTimer();
    const digits = this.digits;
    this.digits = '';
    if (digits !== '') {
      this.onInput(digits);
    }
  }

  private clearTimer(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }
}
