import { createHmac, randomUUID } from 'node:crypto';
import type { Doc } from '../../store/resource-store.js';

/** A webhook target as stored on assistants, phone numbers and tools (src/control/schemas/common.ts). */
export interface ServerTarget {
  readonly url: string;
  readonly timeoutSeconds?: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly credentialId?: string;
  /** Legacy inline secret, sent as `x-vapi-secret`. */
  readonly secret?: string;
  readonly backoffPlan?: {
    readonly type: 'fixed' | 'exponential';
    readonly maxRetries: number;
    readonly baseDelaySeconds: number;
  };
}

export interface BearerPlan {
  readonly type: 'bearer';
  readonly token: string;
  readonly headerName?: string;
  readonly bearerPrefixEnabled?: boolean;
}

export interface HmacPlan {
  readonly type: 'hmac';
  readonly secretKey: string;
  readonly algorithm: 'sha256' | 'sha512' | 'sha1';
  readonly signatureHeader?: string;
  readonly timestampHeader?: string;
  readonly signaturePrefix?: string;
  readonly includeTimestamp?: boolean;
  readonly payloadFormat?: string;
  readonly messageIdHeader?: string;
  readonly signatureEncoding?: 'hex' | 'base64';
  readonly secretIsBase64?: boolean;
}

export interface OAuth2Plan {
  readonly type: 'oauth2';
  readonly url: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly scope?: string;
}

export type AuthenticationPlan = BearerPlan | HmacPlan | OAuth2Plan;

/** What a signature may cover besides the body. */
export interface SigningInput {
  readonly method: string;
  readonly url: string;
  readonly body: string;
  /** Epoch ms; the timestamp header and `{timestamp}` carry it as Unix seconds. */
  readonly nowMs: number;
}

const DEFAULT_PAYLOAD_FORMAT = '{timestamp}.{body}';

/** The server object of a document, if it has a usable one (a string url at least). */
export function asServer(value: unknown): ServerTarget | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return null;
  }
  const url = (value as Doc).url;
  return typeof url === 'string' && url !== '' ? (value as ServerTarget) : null;
}

/** The authentication plan of a stored `webhook` credential (secrets opened), or null. */
export function webhookAuthPlan(credential: Doc | null): AuthenticationPlan | null {
  if (credential === null || credential.provider !== 'webhook') {
    return null;
  }
  const plan = credential.authenticationPlan as { type?: unknown } | undefined;
  if (plan === undefined || plan === null || typeof plan !== 'object') {
    return null;
  }
  return plan.type === 'bearer' || plan.type === 'hmac' || plan.type === 'oauth2'
    ? (plan as AuthenticationPlan)
    : null;
}

export function bearerHeaders(plan: BearerPlan): Record<string, string> {
  const name = plan.headerName ?? 'Authorization';
  const prefixed = plan.bearerPrefixEnabled ?? true;
  return { [name]: prefixed ? `Bearer ${plan.token}` : plan.token };
}

/**
 * HMAC signing as the platform's `hmac` plan describes it: the signed text is `payloadFormat`
 * with `{timestamp}`, `{body}`, `{method}`, `{url}` and `{svix-id}` substituted in one pass (so a
 * body containing those words is never substituted again). With `includeTimestamp: false` and
 * the default format, only the body is signed and no timestamp header is sent. A base64 secret
 * may carry Svix's `whsec_` prefix.
 */
export function hmacHeaders(plan: HmacPlan, input: SigningInput): Record<string, string> {
  const includeTimestamp = plan.includeTimestamp ?? true;
  let format = plan.payloadFormat ?? DEFAULT_PAYLOAD_FORMAT;
  if (!includeTimestamp && format === DEFAULT_PAYLOAD_FORMAT) {
    format = '{body}';
  }
  const timestamp = String(Math.floor(input.nowMs / 1000));
  const messageId = `msg_${randomUUID().replace(/-/g, '')}`;
  const values: Record<string, string> = {
    timestamp,
    body: input.body,
    method: input.method,
    url: input.url,
    'svix-id': messageId,
  };
  const payload = format.replace(
    /\{(timestamp|body|method|url|svix-id)\}/g,
    (_match, name: string) => values[name] ?? '',
  );
  const secret =
    plan.secretIsBase64 === true
      ? Buffer.from(plan.secretKey.replace(/^whsec_/, ''), 'base64')
      : Buffer.from(plan.secretKey, 'utf8');
  const digest = createHmac(plan.algorithm, secret)
    .update(payload, 'utf8')
    .digest(plan.signatureEncoding ?? 'hex');
  const headers: Record<string, string> = {
    [plan.signatureHeader ?? 'x-signature']: `${plan.signaturePrefix ?? ''}${digest}`,
  };
  if (includeTimestamp) {
    headers[plan.timestampHeader ?? 'x-timestamp'] = timestamp;
  }
  if (plan.messageIdHeader !== undefined && plan.messageIdHeader !== '') {
    headers[plan.messageIdHeader] = messageId;
  }
  return headers;
}

/**
 * Header names are case-insensitive: later sets replace earlier entries of the same name
 * whatever their case (so an `authorization` in server.headers overrides the credential's).
 */
export function mergeHeaders(
  ...sets: readonly (Readonly<Record<string, string>> | undefined)[]
): Record<string, string> {
  const byLower = new Map<string, [string, string]>();
  for (const set of sets) {
    for (const [name, value] of Object.entries(set ?? {})) {
      if (typeof value === 'string') {
        byLower.set(name.toLowerCase(), [name, value]);
      }
    }
  }
  return Object.fromEntries(byLower.values());
}
