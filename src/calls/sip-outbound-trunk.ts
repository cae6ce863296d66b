/**
 * What an outbound call or a registration needs from a `byo-sip-trunk` credential: the gateway
 * to send to (first one with `outboundEnabled`, hostnames resolved to an address), the outbound
 * proxy every request goes through (when set), the digest credentials of
 * `outboundAuthenticationPlan`, and the registration terms of its `sipRegisterPlan`.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Doc } from '../store/resource-store.js';
import type { SipRequestTarget } from '../transports/sip/transaction-layer.js';
import { isSipUri, parseUri } from '../transports/sip/uri.js';

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

/**
 * The trunk's outbound proxy (RFC 3261 §8.1.2): requests are sent to `target` with `route` as
 * their first Route header, while the Request-URI still names the gateway or customer.
 */
export interface OutboundProxy {
  readonly target: SipRequestTarget;
  /** `<sip:proxy.example.com:5070;transport=tcp;lr>`: the configured URI, loose-routing. */
  readonly route: string;
}

export interface OutboundTrunk extends OutboundGateway {
  /** Every usable outbound gateway in order (the first one is also the trunk's own fields). */
  readonly gateways: readonly OutboundGateway[];
  readonly auth?: DigestUser;
  readonly outboundProxy?: OutboundProxy;
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

/**
 * Resolves a host (A/AAAA, no NAPTR/SRV) to the address requests are sent to; with `via` (the
 * outbound proxy's address) the host is not looked up: only the proxy needs to reach it.
 */
async function resolveHop(
  what: string,
  protocol: string,
  rawHost: string,
  port: number,
  via?: SipRequestTarget,
): Promise<GatewayResult> {
  if (protocol !== 'udp' && protocol !== 'tcp') {
    return {
      ok: false,
      message: `Outbound protocol ${protocol} is not supported yet (use udp or tcp)`,
    };
  }
  const host = rawHost.replace(/^\[|\]$/g, '');
  let address = host;
  if (via === undefined && isIP(host) === 0) {
    try {
      address = (await lookup(host)).address;
    } catch {
      return { ok: false, message: `The SIP trunk ${what} ${host} does not resolve` };
    }
  }
  return {
    ok: true,
    gateway: {
      target: via ?? { transport: protocol === 'tcp' ? 'TCP' : 'UDP', address, port },
      host: host.includes(':') ? `[${host}]` : host,
      port,
    },
  };
}

function resolveGateway(gateway: Doc, via: SipRequestTarget | undefined): Promise<GatewayResult> {
  const protocol = typeof gateway.outboundProtocol === 'string' ? gateway.outboundProtocol : 'udp';
  const port = typeof gateway.port === 'number' ? gateway.port : 5060;
  return resolveHop('gateway', protocol, String(gateway.ip), port, via);
}

type ProxyResult = { ok: true; proxy?: OutboundProxy } | { ok: false; message: string };

/** `outboundProxy`: its transport from the `transport` param (udp by default), port 5060. */
async function resolveProxy(value: unknown): Promise<ProxyResult> {
  if (value === undefined || value === null || value === '') {
    return { ok: true };
  }
  const configured = typeof value === 'string' ? value : JSON.stringify(value);
  const uri = parseUri(configured);
  if (uri === null || !isSipUri(uri) || uri.headers !== undefined) {
    return { ok: false, message: `The SIP trunk outbound proxy ${configured} is no SIP URI` };
  }
  const transport = uri.params.get('transport')?.toLowerCase();
  const protocol = uri.scheme === 'sips' ? 'tls' : (transport ?? 'udp');
  const hop = await resolveHop('outbound proxy', protocol, uri.host, uri.port ?? 5060);
  if (!hop.ok) {
    return hop;
  }
  const route = `<${uri.params.has('lr') ? configured : `${configured};lr`}>`;
  return { ok: true, proxy: { target: hop.gateway.target, route } };
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
  const proxy = await resolveProxy(credential.outboundProxy);
  if (!proxy.ok) {
    return proxy;
  }
  const via = proxy.proxy?.target;
  const resolved = await Promise.all(entries.map((entry) => resolveGateway(entry, via)));
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
      ...(proxy.proxy !== undefined && { outboundProxy: proxy.proxy }),
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
