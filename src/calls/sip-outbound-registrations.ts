/**
 * Registrations to SIP trunks (RFC 3261 §10) for every `byo-sip-trunk` credential whose
 * `outboundAuthenticationPlan.sipRegisterPlan` asks for one. They start with the SIP server and
 * are reloaded every `reloadIntervalMs` (default 60 s): a new or changed credential gets its
 * binding within that time, a deleted one is unregistered.
 */
import type { Resource } from '../store/resource-store.js';
import type { Store } from '../store/store.js';
import { SipRegistration, type SipRegistrationState } from '../transports/sip/sip-registration.js';
import type { SipTransactionLayer } from '../transports/sip/transaction-layer.js';
import type { SipTransport } from '../transports/sip/transport.js';
import { resolveTrunk } from './sip-outbound-trunk.js';

/** How many orgs, and trunks per org, a reload scans. */
const MAX_ORGS = 1000;
const MAX_TRUNKS_PER_ORG = 100;
/** How long close() waits for the registrars to confirm the unREGISTERs. */
const CLOSE_WAIT_MS = 3000;

export interface SipRegistrationsOptions {
  readonly store: Store;
  readonly transactions: SipTransactionLayer;
  readonly transports: readonly SipTransport[];
  readonly reloadIntervalMs?: number;
  /** Registration retry and expiry terms (tests shorten them). */
  readonly expiresSeconds?: number;
  readonly retryBaseMs?: number;
  readonly log: (error: unknown, message: string) => void;
}

interface Entry {
  readonly registration: SipRegistration;
  /** The credential fields the binding was made from; a change re-registers. */
  readonly fingerprint: string;
}

export class SipRegistrations {
  private readonly entries = new Map<string, Entry>();
  private timer: NodeJS.Timeout | undefined;
  private reloading: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly options: SipRegistrationsOptions) {}

  /** The registration of a credential, if it asks for one (for status and tests). */
  state(orgId: string, credentialId: string): SipRegistrationState | undefined {
    return this.entries.get(`${orgId}/${credentialId}`)?.registration.state;
  }

  async start(): Promise<void> {
    await this.reload();
    this.timer = setInterval(() => void this.reload(), this.options.reloadIntervalMs ?? 60_000);
    this.timer.unref();
  }

  /** Reads the trunks again: starts new bindings, replaces changed ones, drops removed ones. */
  reload(): Promise<void> {
    this.reloading ??= this.scan()
      .catch((error: unknown) => this.options.log(error, 'SIP registrations reload failed'))
      .finally(() => (this.reloading = undefined));
    return this.reloading;
  }

  /** Unregisters every binding (Expires: 0), waiting a little for the registrars' answers. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) {
      clearInterval(this.timer);
    }
    await this.reloading;
    const entries = [...this.entries.values()];
    this.entries.clear();
    // A registrar that does not answer must not hold up the shutdown for Timer F (32 s).
    await Promise.race([
      Promise.all(entries.map((entry) => entry.registration.close())),
      new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref()),
    ]);
  }

  private async scan(): Promise<void> {
    const { store } = this.options;
    const wanted = new Map<string, { orgId: string; credential: Resource }>();
    for (const org of (await store.keys.listOrgs()).slice(0, MAX_ORGS)) {
      const trunks = await store.resources.credentials.list(org.id, {
        limit: MAX_TRUNKS_PER_ORG,
        equals: { provider: 'byo-sip-trunk' },
      });
      for (const trunk of trunks) {
        const plan = trunk.outboundAuthenticationPlan as { sipRegisterPlan?: unknown } | undefined;
        if (plan?.sipRegisterPlan === undefined) {
          continue;
        }
        const credential = await store.resources.credentials.getInternal(org.id, trunk.id);
        if (credential !== null) {
          wanted.set(`${org.id}/${trunk.id}`, { orgId: org.id, credential });
        }
      }
    }
    if (this.closed) {
      return;
    }
    for (const [key, entry] of [...this.entries]) {
      const next = wanted.get(key);
      if (next === undefined || fingerprintOf(next.credential) !== entry.fingerprint) {
        this.entries.delete(key);
        void entry.registration.close();
      }
    }
    for (const [key, { credential }] of wanted) {
      if (!this.entries.has(key)) {
        await this.add(key, credential);
      }
    }
  }

  private async add(key: string, credential: Resource): Promise<void> {
    const resolved = await resolveTrunk(credential);
    if (!resolved.ok || resolved.trunk.register === undefined || this.closed) {
      if (!resolved.ok) {
        this.options.log(new Error(resolved.message), `SIP registration for ${key} not started`);
      }
      return;
    }
    const { trunk } = resolved;
    const register = trunk.register!;
    // Through the outbound proxy when the trunk has one; the Request-URI names the domain.
    const target = trunk.outboundProxy?.target ?? trunk.target;
    const transport = this.options.transports.find((t) => t.name === target.transport);
    if (transport === undefined) {
      return;
    }
    const { host, port } = transport.sentBy;
    const param = target.transport === 'TCP' ? ';transport=tcp' : '';
    const registration = new SipRegistration({
      transactions: this.options.transactions,
      target,
      ...(trunk.outboundProxy !== undefined && { route: trunk.outboundProxy.route }),
      domain: register.domain,
      user: register.username,
      contactUri: `sip:${register.username}@${host}:${port}${param}`,
      ...(trunk.auth !== undefined && { auth: trunk.auth }),
      ...(this.options.expiresSeconds !== undefined && {
        expiresSeconds: this.options.expiresSeconds,
      }),
      ...(this.options.retryBaseMs !== undefined && { retryBaseMs: this.options.retryBaseMs }),
      onStateChange: (state, detail) => {
        if (state === 'failed') {
          this.options.log(new Error(detail), `SIP registration ${key} failed`);
        }
      },
    });
    this.entries.set(key, { registration, fingerprint: fingerprintOf(credential) });
    registration.start();
  }
}

function fingerprintOf(credential: Resource): string {
  return JSON.stringify([
    credential.gateways,
    credential.outboundAuthenticationPlan,
    credential.outboundLeadingPlusEnabled,
    credential.outboundProxy,
  ]);
}
