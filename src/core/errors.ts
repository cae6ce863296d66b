/**
 * Every error Parla raises on purpose carries a stable `code`. HTTP-facing errors also carry the
 * status code they answer with; docs/errors.md lists every code (a test keeps the two in step).
 */
export const ERROR_CODES = {
  ERR_VALIDATION: 400,
  ERR_BAD_REQUEST: 400,
  ERR_UNAUTHORIZED: 401,
  ERR_NOT_FOUND: 404,
  ERR_CONFLICT: 409,
  ERR_PAYLOAD_TOO_LARGE: 413,
  ERR_UNSUPPORTED_MEDIA_TYPE: 415,
  ERR_INTERNAL: 500,
  ERR_PROVIDER: 502,
  ERR_PROVIDER_TIMEOUT: 504,
  ERR_CONFIG: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  504: 'Gateway Timeout',
};

export function statusText(statusCode: number): string {
  return STATUS_TEXT[statusCode] ?? 'Error';
}

export class ParlaError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  /** A list of problems (validation) or one sentence. */
  readonly details: string | string[];

  constructor(code: ErrorCode, details: string | string[], options?: { cause?: unknown }) {
    super(Array.isArray(details) ? details.join('; ') : details, options);
    this.name = 'ParlaError';
    this.code = code;
    this.statusCode = ERROR_CODES[code];
    this.details = details;
  }
}

export function notFound(resource: string, id: string): ParlaError {
  return new ParlaError('ERR_NOT_FOUND', `${resource} with id ${id} not found`);
}

export function badRequest(details: string | string[]): ParlaError {
  return new ParlaError('ERR_VALIDATION', Array.isArray(details) ? details : [details]);
}
