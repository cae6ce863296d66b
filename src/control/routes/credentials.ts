import { isIP } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { badRequest } from '../../core/errors.js';
import type { Doc } from '../../store/resource-store.js';
import { SECRET_FIELDS } from '../../store/secret-box.js';
import { mergePatch, registerCrud } from '../crud.js';
import { LimitQuery, Strict } from '../schemas/common.js';
import {
  credentialSchema,
  CredentialBody,
  CredentialPatchBody,
  SIP_TRUNK,
} from '../schemas/credential.js';
import { validateBody } from '../validation.js';
import type { RouteDeps } from './index.js';

const SEALED_PREFIX = 'sealed:';
const HOSTNAME =
  /^(?=.{1,253}$)[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*\.?$/;

type Plain = Record<string, unknown>;

function isPlainObject(value: unknown): value is Plain {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A gateway address is an IP address or a hostname; dotted digits must be a real IPv4. */
function checkGateways(doc: Doc): void {
  if (doc.provider !== SIP_TRUNK || !Array.isArray(doc.gateways)) {
    return;
  }
  (doc.gateways as Plain[]).forEach((gateway, index) => {
    const ip = String(gateway.ip);
    const ok = isIP(ip) !== 0 || (HOSTNAME.test(ip) && !/^[\d.]+$/.test(ip));
    if (!ok) {
      throw badRequest(`gateways.${index}.ip must be an IPv4 or IPv6 address or a hostname`);
    }
  });
}

/**
 * Secrets arrive in clear and are sealed by the store, which leaves already-sealed values alone:
 * refuse input that only looks sealed, so nobody can plant a value the store would try to open.
 */
function rejectSealedLookalikes(value: unknown, path: string): void {
  if (Array.isArray(value)) {
    value.forEach((item, index) => rejectSealedLookalikes(item, `${path}${index}.`));
    return;
  }
  if (!isPlainObject(value)) {
    return;
  }
  for (const [key, child] of Object.entries(value)) {
    if (SECRET_FIELDS.has(key) && typeof child === 'string' && child.startsWith(SEALED_PREFIX)) {
      throw badRequest(`${path}${key} must not start with ${SEALED_PREFIX}`);
    }
    rejectSealedLookalikes(child, `${path}${key}.`);
  }
}

/**
 * PATCH keeps a stored secret that is not resent: where the patch replaces an object (of the
 * same `type`, when it has one), secret fields it leaves out are copied from the stored one.
 */
function keepSecrets(stored: unknown, next: unknown): unknown {
  if (!isPlainObject(stored) || !isPlainObject(next) || stored.type !== next.type) {
    return next;
  }
  const out: Plain = { ...next };
  for (const [key, value] of Object.entries(stored)) {
    if (SECRET_FIELDS.has(key) && typeof value === 'string' && out[key] === undefined) {
      out[key] = value;
    } else if (isPlainObject(value) && isPlainObject(out[key])) {
      out[key] = keepSecrets(value, out[key]);
    }
  }
  return out;
}

const IDENTITY = ['id', 'orgId', 'createdAt', 'updatedAt'];

function withoutIdentity(doc: Doc): Doc {
  return Object.fromEntries(Object.entries(doc).filter(([key]) => !IDENTITY.includes(key)));
}

export function registerCredentialRoutes(app: FastifyInstance, deps: RouteDeps): void {
  registerCrud(app, deps.store, {
    path: '/credential',
    resource: 'credentials',
    label: 'Credential',
    createSchema: CredentialBody,
    updateSchema: CredentialPatchBody,
    listQuery: Strict(LimitQuery),
    paged: false,
    prepareCreate: (_ctx, body) => {
      rejectSealedLookalikes(body, '');
      const doc = validateBody<Doc>(credentialSchema(String(body.provider)), body);
      checkGateways(doc);
      return doc;
    },
    prepareUpdate: (_ctx, current, patch) => {
      const provider = String(current.provider);
      if (patch.provider !== undefined && patch.provider !== provider) {
        throw badRequest(`provider cannot change from ${provider} to ${patch.provider as string}`);
      }
      rejectSealedLookalikes(patch, '');
      // The merged document must be a valid credential; its stored secrets are still sealed.
      const next = keepSecrets(current, mergePatch(current, patch)) as Doc;
      const doc = validateBody<Doc>(credentialSchema(provider), withoutIdentity(next));
      checkGateways(doc);
      return doc;
    },
  });
}
