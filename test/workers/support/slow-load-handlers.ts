/**
 * A handler module whose loading blocks its thread for 600 ms (as compiling code or creating an
 * ONNX session may), registering the test handlers afterwards.
 */
import type { RegisterCallHandlers } from '../../../src/workers/protocol.js';
import { registerCallHandlers as registerTestHandlers } from './test-handlers.js';

const until = Date.now() + 600;
while (Date.now() < until) {
  // block the thread while "loading"
}

export const registerCallHandlers: RegisterCallHandlers = registerTestHandlers;
