import {
  all,
  create,
  type ConditionalNode,
  type ConstantNode,
  type EvalFunction,
  type FunctionNode,
  type MathJsInstance,
  type MathNode,
  type OperatorNode,
  type ParenthesisNode,
  type SymbolNode,
} from 'mathjs';
import { ParlaError } from '../../core/errors.js';

/*
 * The livekit smart plan's `waitFunction`: a mathjs expression mapping x, the probability that
 * the customer is still speaking, to a wait in milliseconds. Expressions come from API callers,
 * so they are never evaluated as given: the parsed tree is walked and only numbers, x, a few
 * constants, arithmetic, comparison, `?:` and pure math functions are let through. Anything
 * else (assignment, function definitions, blocks, objects, arrays, indexing, strings, units,
 * and functions such as import, createUnit, evaluate or parse) is rejected before compiling.
 */

/** A compiled wait function: x in [0, 1] in, wait in milliseconds out, in [0, MAX_WAIT_MS]. */
export type WaitFunction = (stillSpeakingProbability: number) => number;

/** Longest accepted expression, in characters. */
export const MAX_WAIT_FUNCTION_LENGTH = 1000;

/**
 * Upper bound on a computed wait: the custom endpointing rules' own maximum (15 s). Keeps an
 * expression such as `1e9 * x` from stalling a call; non-finite results also land here.
 */
export const MAX_WAIT_MS = 15_000;

const ALLOWED_SYMBOLS: ReadonlySet<string> = new Set(['x', 'pi', 'PI', 'e', 'E', 'tau', 'phi']);

const ALLOWED_FUNCTIONS: ReadonlySet<string> = new Set([
  'abs',
  'sqrt',
  'cbrt',
  'square',
  'cube',
  'nthRoot',
  'pow',
  'exp',
  'expm1',
  'log',
  'log10',
  'log2',
  'log1p',
  'min',
  'max',
  'floor',
  'ceil',
  'round',
  'fix',
  'sign',
  'mod',
  'hypot',
  'sin',
  'cos',
  'tan',
  'asin',
  'acos',
  'atan',
  'atan2',
  'sinh',
  'cosh',
  'tanh',
]);

/** Operators by their mathjs function name: arithmetic, comparison and logic. */
const ALLOWED_OPERATORS: ReadonlySet<string> = new Set([
  'add',
  'subtract',
  'multiply',
  'divide',
  'pow',
  'mod',
  'unaryMinus',
  'unaryPlus',
  'larger',
  'smaller',
  'largerEq',
  'smallerEq',
  'equal',
  'unequal',
  'and',
  'or',
  'not',
]);

/** Values of x checked at compile time: the expression must give a finite number at each. */
const PROBE_POINTS = [0, 0.25, 0.5, 0.75, 1];

let mathInstance: MathJsInstance | null = null;

/** A private mathjs instance, so that nothing done to the shared default one can affect ours. */
function math(): MathJsInstance {
  if (mathInstance === null) {
    if (all === undefined) {
      throw new ParlaError('ERR_INTERNAL', 'mathjs exports no factory functions');
    }
    mathInstance = create(all, {});
  }
  return mathInstance;
}

function invalid(expression: string, reason: string): ParlaError {
  return new ParlaError(
    'ERR_VALIDATION',
    `smartEndpointingPlan.waitFunction ${JSON.stringify(expression)} is not allowed: ${reason}`,
  );
}

/** Throws unless every node of the tree is on the allow-list. */
function checkNode(node: MathNode, expression: string): void {
  switch (node.type) {
    case 'ConstantNode': {
      const value = (node as ConstantNode).value as unknown;
      if (typeof value !== 'number') {
        const shown = typeof value === 'string' ? JSON.stringify(value) : String(value);
        throw invalid(expression, `only numeric constants may be used, found ${shown}`);
      }
      return;
    }
    case 'SymbolNode': {
      const { name } = node as SymbolNode;
      if (!ALLOWED_SYMBOLS.has(name)) {
        throw invalid(
          expression,
          `unknown symbol "${name}"; only x and the constants pi, e, tau and phi may be used`,
        );
      }
      return;
    }
    case 'ParenthesisNode':
      checkNode((node as ParenthesisNode).content, expression);
      return;
    case 'OperatorNode': {
      const operator = node as OperatorNode<never, never>;
      const fn = operator.fn as string;
      if (!ALLOWED_OPERATORS.has(fn)) {
        throw invalid(expression, `operator "${operator.op as string}" is not allowed`);
      }
      for (const arg of operator.args) {
        checkNode(arg, expression);
      }
      return;
    }
    case 'FunctionNode': {
      const call = node as FunctionNode<MathNode>;
      const name = call.fn.type === 'SymbolNode' ? (call.fn as SymbolNode).name : null;
      if (name === null || !ALLOWED_FUNCTIONS.has(name)) {
        throw invalid(
          expression,
          `function ${name === null ? 'expression' : `"${name}"`} is not allowed; allowed: ` +
            [...ALLOWED_FUNCTIONS].join(', '),
        );
      }
      for (const arg of call.args) {
        checkNode(arg, expression);
      }
      return;
    }
    case 'ConditionalNode': {
      const conditional = node as ConditionalNode;
      checkNode(conditional.condition, expression);
      checkNode(conditional.trueExpr, expression);
      checkNode(conditional.falseExpr, expression);
      return;
    }
    default:
      throw invalid(expression, `${describeNode(node.type)} is not allowed`);
  }
}

function describeNode(type: string): string {
  switch (type) {
    case 'AssignmentNode':
      return 'assignment';
    case 'FunctionAssignmentNode':
      return 'a function definition';
    case 'BlockNode':
      return 'more than one statement';
    case 'AccessorNode':
    case 'IndexNode':
      return 'property access or indexing';
    case 'ArrayNode':
      return 'an array';
    case 'ObjectNode':
      return 'an object';
    case 'RangeNode':
      return 'a range';
    default:
      return `a ${type}`;
  }
}

/**
 * Validates and compiles a wait function once; the result is evaluated once per end-of-turn
 * candidate. Throws a ParlaError `ERR_VALIDATION` saying what is wrong with an unsafe or
 * malformed expression, or one that is not a finite number for x in {0, .25, .5, .75, 1}.
 */
export function compileWaitFunction(expression: string): WaitFunction {
  if (expression.trim() === '') {
    throw invalid(expression, 'the expression is empty');
  }
  if (expression.length > MAX_WAIT_FUNCTION_LENGTH) {
    throw invalid(expression, `longer than ${MAX_WAIT_FUNCTION_LENGTH} characters`);
  }
  let root: MathNode;
  try {
    root = math().parse(expression);
  } catch (error) {
    throw invalid(expression, `it does not parse (${(error as Error).message})`);
  }
  checkNode(root, expression);
  const compiled: EvalFunction = root.compile();
  // One scope, reused: evaluation allocates nothing of ours.
  const scope = new Map<string, number>([['x', 0]]);
  const evaluateRaw = (x: number): unknown => {
    scope.set('x', x);
    return compiled.evaluate(scope);
  };
  for (const x of PROBE_POINTS) {
    let result: unknown;
    try {
      result = evaluateRaw(x);
    } catch (error) {
      throw invalid(expression, `evaluating it at x=${x} failed (${(error as Error).message})`);
    }
    if (typeof result !== 'number' || !Number.isFinite(result)) {
      throw invalid(expression, `at x=${x} it gives ${String(result)}, not a finite number`);
    }
  }
  return (stillSpeakingProbability: number): number => {
    const x = Number.isNaN(stillSpeakingProbability)
      ? 0
      : Math.min(1, Math.max(0, stillSpeakingProbability));
    let result: unknown;
    try {
      result = evaluateRaw(x);
    } catch {
      return 0;
    }
    return clampWaitMs(result);
  };
}

/** Negative and non-numeric results give 0; results past MAX_WAIT_MS, and +Infinity, give it. */
export function clampWaitMs(result: unknown): number {
  if (typeof result !== 'number' || Number.isNaN(result) || result <= 0) {
    return 0;
  }
  return Math.min(result, MAX_WAIT_MS);
}
