import { describe, expect, it } from 'vitest';
import { ParlaError } from '../../../src/core/errors.js';
import {
  clampWaitMs,
  compileWaitFunction,
  MAX_WAIT_MS,
} from '../../../src/pipeline/endpointing/wait-function.js';
import { DEFAULT_LIVEKIT_WAIT_FUNCTION } from '../../../src/pipeline/plans.js';

function rejection(expression: string): ParlaError {
  try {
    compileWaitFunction(expression);
  } catch (error) {
    expect(error).toBeInstanceOf(ParlaError);
    return error as ParlaError;
  }
  throw new Error(`${expression} was accepted`);
}

describe('compileWaitFunction', () => {
  it('evaluates the default livekit function at x = 0, 0.5 and 1', () => {
    const wait = compileWaitFunction(DEFAULT_LIVEKIT_WAIT_FUNCTION);
    expect(wait(0)).toBe(20);
    expect(wait(0.5)).toBeCloseTo(20 + 500 * Math.sqrt(0.5) + 2500 * 0.125, 9);
    expect(wait(1)).toBe(3020);
  });

  it("compiles the platform's example functions", () => {
    expect(compileWaitFunction('70 + 4000 * x')(0.5)).toBe(2070);
    expect(compileWaitFunction('200 + 8000 * x')(1)).toBe(8200);
    expect(compileWaitFunction('4000 * (1 - cos(pi * x))')(1)).toBeCloseTo(8000, 9);
    expect(compileWaitFunction('x > 0.5 ? 100 : 200')(0.75)).toBe(100);
    expect(compileWaitFunction('max(100, 1000 * x^2)')(0.1)).toBe(100);
  });

  it('clamps negative results to 0 and huge ones to MAX_WAIT_MS', () => {
    const falling = compileWaitFunction('500 - 1000 * x');
    expect(falling(0.25)).toBe(250);
    expect(falling(0.5)).toBe(0);
    expect(falling(1)).toBe(0);
    expect(compileWaitFunction('-50')(0.3)).toBe(0);
    expect(compileWaitFunction('1e9 * x')(1)).toBe(MAX_WAIT_MS);
  });

  it('clamps x into [0, 1] and reads NaN as 0', () => {
    const wait = compileWaitFunction('1000 * x');
    expect(wait(2)).toBe(1000);
    expect(wait(-1)).toBe(0);
    expect(wait(Number.NaN)).toBe(0);
  });

  it('gives 0 where the expression is undefined between the probe points', () => {
    // 1/(x - 0.3) is finite at 0, .25, .5, .75 and 1 but infinite at 0.3 and negative below it.
    const wait = compileWaitFunction('1 / (x - 0.3)');
    expect(wait(0.2)).toBe(0);
    expect(wait(0.3)).toBe(MAX_WAIT_MS);
    expect(wait(0.8)).toBe(2);
  });

  it.each([
    ['x = 1', 'assignment'],
    ['a = 5; a * x', 'more than one statement'],
    ['f(x) = 2 * x', 'a function definition'],
    ['import({pi: 4}, {override: true})', 'function "import"'],
    ['createUnit("furlong", "220 yards")', 'function "createUnit"'],
    ['evaluate("1 + 1")', 'function "evaluate"'],
    ['parse("x")', 'function "parse"'],
    ['simplify("x + x")', 'function "simplify"'],
    ['compile("x")', 'function "compile"'],
    ['x(1)', 'function "x"'],
    ['sqrt.constructor', 'property access or indexing'],
    ['x[1]', 'property access or indexing'],
    ['[1, 2]', 'an array'],
    ['{a: 1}', 'an object'],
    ['1:3', 'a range'],
    ['"100"', 'only numeric constants'],
    ['true ? 1 : 2', 'only numeric constants'],
    ['5 cm', 'unknown symbol "cm"'],
    ['y * 100', 'unknown symbol "y"'],
    ['x!', 'operator "!"'],
    ['1 / x', 'at x=0 it gives Infinity'],
    ['log(x)', 'at x=0 it gives -Infinity'],
    ['sqrt(x - 2)', 'not a finite number'],
    ['x > 0.5', 'at x=0 it gives false'],
    ['20 +', 'does not parse'],
    ['  ', 'empty'],
  ])('rejects %s (%s) with a clear validation error', (expression, reason) => {
    const error = rejection(expression);
    expect(error.code).toBe('ERR_VALIDATION');
    expect(error.message).toContain('smartEndpointingPlan.waitFunction');
    expect(error.message).toContain(JSON.stringify(expression));
    expect(error.message).toContain(reason);
  });

  it('rejects expressions over the length limit', () => {
    expect(rejection(`${'1 + '.repeat(300)}x`).message).toContain('longer than 1000 characters');
  });

  it('leaves the shared mathjs instance alone', async () => {
    compileWaitFunction(DEFAULT_LIVEKIT_WAIT_FUNCTION);
    const mathjs = await import('mathjs');
    expect(mathjs.evaluate('sqrt(16)')).toBe(4);
  });
});

describe('clampWaitMs', () => {
  it.each([
    [-1, 0],
    [0, 0],
    [12.5, 12.5],
    [Number.NaN, 0],
    [Number.POSITIVE_INFINITY, MAX_WAIT_MS],
    ['100', 0],
  ])('%s gives %s', (input, expected) => {
    expect(clampWaitMs(input)).toBe(expected);
  });
});
