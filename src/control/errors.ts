import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ParlaError, statusText } from '../core/errors.js';
import { formatErrors } from './validation.js';

/** The one error body shape: `{statusCode, error, message}`. */
export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string | string[];
}

export function errorBody(statusCode: number, message: string | string[]): ErrorBody {
  return { statusCode, error: statusText(statusCode), message };
}

export function handleError(
  error: FastifyError | ParlaError | Error,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  if (error instanceof ParlaError) {
    if (error.statusCode >= 500) {
      request.log.error({ err: error }, 'request failed');
    }
    void reply.code(error.statusCode).send(errorBody(error.statusCode, error.details));
    return;
  }
  const fastifyError = error as FastifyError;
  if (fastifyError.validation !== undefined) {
    const prefix = fastifyError.validationContext === 'body' ? '' : '';
    void reply
      .code(400)
      .send(errorBody(400, formatErrors(fastifyError.validation as never, prefix)));
    return;
  }
  // PostgreSQL data exceptions (class 22: out-of-range dates and numbers, untranslatable
  // characters) come from values the schemas let through; they are the client's, not ours.
  const sqlState = (error as { code?: unknown; severity?: unknown }).code;
  if (typeof sqlState === 'string' && sqlState.startsWith('22') && 'severity' in error) {
    void reply.code(400).send(errorBody(400, [`invalid value: ${error.message}`]));
    return;
  }
  const status = fastifyError.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    void reply.code(status).send(errorBody(status, fastifyError.message));
    return;
  }
  request.log.error({ err: error }, 'request failed');
  void reply.code(500).send(errorBody(500, 'Internal server error'));
}
