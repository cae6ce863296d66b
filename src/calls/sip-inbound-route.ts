import { isIPv4, isIPv6 } from 'node:net';
import type { Doc, Resource } from '../store/resource-store.js';
import type { Store } from '../store/store.js';

/** How many orgs holding the same dialled number are considered. */
const MAX_SHARED_NUMBERS = 10;
/** The longest dialled number considered (the phone number schema allows 40 characters). */
const MAX_NUMBER_LENGTH = 40;
const NUMBER_RE = /^\+?[0-9A-Za-z]{1,40}$/;

/** Where an inbound INVITE goes: a number of an org, or nowhere (403, whatever the cause). */
export type InboundRoute =
  | {
      readonly ok: true;
      readonly orgId: string;
      readonly phoneNumber: Resource;
      /** The number's byo-sip-trunk credential (secrets left out). */
      readonly trunk: Resource;
    }
  | { readonly ok: false; readonly why: 'unknown-number' | 'source-not-allowed' };

function isObject(value: unknown): value is Doc {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function ipv4Value(address: string): number | undefined {
  const parts = address.split('.').map(Number);
  if (parts.length !== 4 || parts.some((part) => !Number.isInteger(part) || part > 255)) {
    return undefined;
  }
  return ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
}

/** `::ffff:192.0.2.1` as 192.0.2.1; other addresses lower-cased. */
function normalizeAddress(address: string): string {
  const lower = address.toLowerCase().replace(/^\[|\]$/g, '');
  return lower.startsWith('::ffff:') && isIPv4(lower.slice(7)) ? lower.slice(7) : lower;
}

/**
 * Whether a packet from `address` may start a call on a trunk: one of the credential's gateways
 * with `inboundEnabled` (default true) has this IP, within its `netmask` (24–32, IPv4 only).
 * Hostname gateways are outbound-only.
 */
export function gatewayAllows(credential: Doc, address: string): boolean {
  const source = normalizeAddress(address);
  const gateways = Array.isArray(credential.gateways) ? credential.gateways : [];
  for (const gateway of gateways) {
    if (!isObject(gateway) || gateway.inboundEnabled === false || typeof gateway.ip !== 'string') {
      continue;
    }
    const ip = normalizeAddress(gateway.ip);
    if (isIPv4(ip) && isIPv4(source)) {
      const bits = typeof gateway.netmask === 'number' ? gateway.netmask : 32;
      const mask = bits >= 32 ? 0xffffffff : (0xffffffff << (32 - bits)) >>> 0;
      if ((ipv4Value(ip)! & mask) >>> 0 === (ipv4Value(source)! & mask) >>> 0) {
        return true;
      }
    } else if (isIPv6(ip) && isIPv6(source) && ip === source) {
      return true;
    }
  }
  return false;
}

/** The numbers a dialled user part may be stored as: as sent, with and without its `+`. */
export function numberCandidates(user: string): string[] {
  const number = user.split(';')[0]!.replace(/[-.() ]/g, '');
  if (number.length > MAX_NUMBER_LENGTH || !NUMBER_RE.test(number)) {
    return [];
  }
  const bare = number.startsWith('+') ? number.slice(1) : number;
  return [...new Set([number, `+${bare}`, bare])];
}

/**
 * Finds the `byo-phone-number` a dialled user part names, in any org (one indexed lookup), and
 * checks that the packet came from an inbound gateway of the number's `byo-sip-trunk`
 * credential, or that `authenticated` accepts the trunk (read with its secrets open: digest
 * credentials). When orgs share a number, the first (oldest) whose trunk admits the call wins.
 */
export async function routeInbound(
  store: Store,
  users: readonly string[],
  sourceAddress: string,
  authenticated?: (trunk: Doc) => boolean,
): Promise<InboundRoute> {
  const candidates = [...new Set(users.flatMap(numberCandidates))];
  if (candidates.length === 0) {
    return { ok: false, why: 'unknown-number' };
  }
  const numbers = (
    await store.resources.phoneNumbers.findAcrossOrgs('number', candidates, MAX_SHARED_NUMBERS)
  ).filter((number) => number.provider === 'byo-phone-number');
  if (numbers.length === 0) {
    return { ok: false, why: 'unknown-number' };
  }
  for (const phoneNumber of numbers) {
    const credentialId = phoneNumber.credentialId;
    const trunk =
      typeof credentialId === 'string'
        ? await store.resources.credentials.get(phoneNumber.orgId, credentialId)
        : null;
    if (trunk?.provider !== 'byo-sip-trunk') {
      continue;
    }
    if (gatewayAllows(trunk, sourceAddress)) {
      return { ok: true, orgId: phoneNumber.orgId, phoneNumber, trunk };
    }
    if (authenticated !== undefined) {
      const internal = await store.resources.credentials.getInternal(phoneNumber.orgId, trunk.id);
      if (internal !== null && authenticated(internal)) {
        return { ok: true, orgId: phoneNumber.orgId, phoneNumber, trunk };
      }
    }
  }
  return { ok: false, why: 'source-not-allowed' };
}
