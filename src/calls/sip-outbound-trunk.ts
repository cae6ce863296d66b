/**
 * What an outbound call or a registration needs from a `byo-sip-trunk` credential: the gateway
 * to send to (first one with `outboundEnabled`, hostnames resolved to an address), the digest
 * credentials of `outboundAuthenticationPlan`, and the registration terms of its
 * `sipRegisterPlan`.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Doc } from '../store/resource-store.js';
import type { SipRequestTarget } from '../transports/sip/transaction-layer.js';

export interface DigestUser {
  readonly username: string;
  readonly password: string;
  /** Only challenges of this realm are answered (when set). */
  readonly realm?: string;
}

/** One outbound gateway: where INVITEs go, and the host part of the URIs sent there. */
export interface OutboundGateway {
  readonly target: SipRequestTarget;
  /** The gateway as configured (a hostname stays a hostname), IPv6 in brackets. */
  readonly host: string;
  readonly port: number;
}

export interface OutboundTrunk extends OutboundGateway {
  /** Every usable outbound gateway in order (the first one is also the trunk's own fields). */
  readonly gateways: readonly OutboundGateway[];
  readonly auth?: DigestUser;
  /** Keep the customer's leading `+` in the Request-URI (default off, as carriers expect). */
  readonly leadingPlus: boolean;
  readonly register?: { readonly domain: string; readonly username: string };
}

export type TrunkResult =
  | { readonly ok: true; readonly trunk: OutboundTrunk }
  | { readonly ok: false; readonly message: string };

function isObject(value: unknown): value is Doc {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

type GatewayResult = { ok: true; gateway: OutboundGateway } | { ok: false; message: string };

async function resolveGateway(gateway: Doc): Promise<GatewayResult> {
  const protocol = typeof gateway.outboundProtocol === 'string' ? gateway.outboundProtocol : 'udp';
  if (protocol !== 'udp' && protocol !== 'tcp') {
    return {
      ok: false,
      message: `Outbound protocol ${protocol} is not supported yet (use udp or tcp)`,
    };
  }
  const host = String(gateway.ip).replace(/^\[|\]$/g, '');
  const port = typeof gateway.port === 'number' ? gateway.port : 5060;
  let address = host;
  if (isIP(host) === 0) {
    try {
      address = (await lookup(host)).address;
    } catch {
      return { ok: false, message: `The SIP trunk gateway ${host} does not resolve` };
    }
  }
  return {
    ok: true,
    gateway: {
      target: { transport: protocol === 'tcp' ? 'TCP' : 'UDP', address, port },
      host: host.includes(':') ? `[${host}]` : host,
      port,
    },
  };
}

/**
 * Reads a trunk credential (with its secrets open) and resolves its outbound gateways (those
 * with `outboundEnabled`, in order; unusable ones are skipped while another one works).
 */
export async function resolveTrunk(credential: Doc): Promise<TrunkResult> {
  const entries = (Array.isArray(credential.gateways) ? credential.gateways : []).filter(
    (entry): entry is Doc =>
      isObject(entry) && entry.outboundEnabled !== false && typeof entry.ip === 'string',
  );
  if (entries.length === 0) {
    return { ok: false, message: 'The SIP trunk has no gateway with outboundEnabled' };
  }
  const resolved = await Promise.all(entries.map((entry) => resolveGateway(entry)));
  const gateways = resolved.flatMap((result) => (result.ok ? [result.gateway] : []));
  const first = gateways[0];
  if (first === undefined) {
    const failure = resolved.find((result) => !result.ok);
    return { ok: false, message: failure?.ok === false ? failure.message : 'No usable gateway' };
  }
  const plan = isObject(credential.outboundAuthenticationPlan)
    ? credential.outboundAuthenticationPlan
    : {};
  const registerPlan = isObject(plan.sipRegisterPlan) ? plan.sipRegisterPlan : undefined;
  const username = text(plan.authUsername) ?? text(registerPlan?.username);
  const password = text(plan.authPassword);
  const realm = text(registerPlan?.realm);
  const auth =
    username !== undefined && password !== undefined
      ? { username, password, ...(realm !== undefined && { realm }) }
      : undefined;
  const registerUser = text(registerPlan?.username) ?? username;
  return {
    ok: true,
    trunk: {
      ...first,
      gateways,
      ...(auth !== undefined && { auth }),
      leadingPlus: credential.outboundLeadingPlusEnabled === true,
      ...(registerPlan !== undefined &&
        registerUser !== undefined && {
          register: { domain: text(registerPlan.domain) ?? first.host, username: registerUser },
        }),
    },
  };
}

/**
 * A number as a SIP user part: visual separators dropped; with `leadingPlus` a number of digits
 * gets a `+`, without it the `+` goes.
 */
export function dialledUser(number: string, leadingPlus: boolean): string {
  const bare = number.replace(/[\s\-.()]/g, '');
  const rest = bare.startsWith('+') ? bare.slice(1) : bare;
  return leadingPlus && /^[0-9]+$/.test(rest) ? `+${rest}` : rest;
}
