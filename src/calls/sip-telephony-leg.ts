/**
 * The telephony side of one SIP call: blind transfer with REFER (RFC 3515, the transferor's
 * part of RFC 5589) and DTMF out, as RFC 4733 events on the call's RTP session or, when the
 * peer did not offer telephone-event, as SIP INFO (application/dtmf-relay).
 */
import type { Doc } from '../store/resource-store.js';
import {
  DTMF_GAP_MS,
  DTMF_TONE_MS,
  parseDtmfDigits,
  type DtmfStep,
} from '../transports/rtp/dtmf-sender.js';
import type { RtpSession } from '../transports/rtp/rtp-session.js';
import type { SipDialog } from '../transports/sip/dialog.js';
import { parseNameAddr } from '../transports/sip/name-addr.js';
import type { SipUserAgent } from '../transports/sip/sip-user-agent.js';
import { formatUri, isSipUri, parseUri } from '../transports/sip/uri.js';
import { sendInfoDigit } from './sip-bridge-dtmf.js';
import { readReferNotify, referRefusal, referTarget, requestPendingWaitMs } from './sip-refer.js';
import type { TelephonyLeg, TransferOutcome } from './telephony-leg.js';

/** transferPlan.timeout when unset: how long the far end has to report the transfer's end. */
export const DEFAULT_TRANSFER_TIMEOUT_S = 60;
const MAX_TRANSFER_TIMEOUT_S = 3600;
/** Beyond the time a dial string takes, how long DTMF may lag before we give up. */
const DTMF_SLACK_MS = 5000;
/** A stable error code on a thrown Error. */
export class TelephonyError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface SipTelephonyLegOptions {
  readonly agent: Pick<SipUserAgent, 'dialogs' | 'watchNotify' | 'hangUp'>;
  readonly dialog: SipDialog;
  readonly rtp: Pick<RtpSession, 'canSendDtmf' | 'sendDtmfSteps'>;
  /** Host (and port) for `number` destinations. Default: the host of the dialog's peer. */
  readonly numberHost?: string;
  /**
   * When the far end refuses the REFER (a final non-2xx), carry the transfer ourselves: dial the
   * destination and bridge the caller to it (src/calls/sip-bridge.ts). Without it a refused
   * REFER is the transfer's outcome.
   */
  readonly bridge?: (destination: Doc) => Promise<TransferOutcome>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms).unref());

export class SipTelephonyLeg implements TelephonyLeg {
  private transferring = false;
  private accepted = false;
  /** Settles the REFER being waited on. */
  private settleRefer: ((outcome: TransferOutcome) => void) | undefined;

  constructor(private readonly options: SipTelephonyLegOptions) {}

  /**
   * The far end accepted a REFER (202) of ours: if it now ends the dialog itself, the call
   * was forwarded, not hung up (many trunks BYE before their final NOTIFY).
   */
  get transferAccepted(): boolean {
    return this.accepted;
  }

  /**
   * The dialog ended (the call layer's onDialogEnded): a transfer waiting for its NOTIFY is
   * over, done if the far end had accepted the REFER.
   */
  onDialogEnded(): void {
    this.settleRefer?.(
      this.accepted
        ? { ok: true }
        : { ok: false, code: 'call-ended', message: 'The call ended during the transfer' },
    );
  }

  async transfer(destination: Doc): Promise<TransferOutcome> {
    const { agent, dialog } = this.options;
    if (this.transferring) {
      return { ok: false, code: 'transfer-in-progress', message: 'A transfer is already running' };
    }
    if (dialog.state === 'terminated') {
      return { ok: false, code: 'call-ended', message: 'The call has ended' };
    }
    const plan = isRecord(destination.transferPlan) ? destination.transferPlan : {};
    const mode = typeof plan.mode === 'string' ? plan.mode : 'blind-transfer';
    const verb = typeof plan.sipVerb === 'string' ? plan.sipVerb : 'refer';
    const bridge = this.options.bridge;
    if (mode !== 'blind-transfer' || (verb !== 'refer' && (verb !== 'dial' || !bridge))) {
      return {
        ok: false,
        code: 'transfer-not-supported',
        message: `SIP calls support transferPlan.mode blind-transfer with sipVerb refer${bridge ? ' or dial' : ''} (got ${mode}, ${verb})`,
      };
    }
    const target = referTarget(destination, this.options.numberHost ?? peerHost(dialog));
    if (!target.ok) {
      return target;
    }
    const timeoutS =
      typeof plan.timeout === 'number' && plan.timeout > 0
        ? Math.min(plan.timeout, MAX_TRANSFER_TIMEOUT_S)
        : DEFAULT_TRANSFER_TIMEOUT_S;
    this.transferring = true;
    try {
      if (verb === 'dial') {
        // sipVerb dial: no REFER, Parla dials the destination and bridges (keys an extension).
        return await bridge!(destination);
      }
      const refer = () => this.refer(target.referTo, target.headers, timeoutS * 1000);
      let outcome = await refer();
      if (refusalOf(outcome) === 'retry' && !hasEnded(dialog)) {
        await sleep(requestPendingWaitMs());
        outcome = hasEnded(dialog) ? outcome : await refer();
      }
      const refusal = refusalOf(outcome);
      if (refusal === undefined || outcome.ok) {
        if (outcome.ok) {
          // RFC 5589 §6: the transferor ends its dialog once the transfer succeeded.
          await agent.hangUp(dialog).catch(() => undefined);
        }
        return outcome;
      }
      if (refusal === 'dialog-gone') {
        return {
          ok: false,
          code: 'transfer-failed',
          message: `${outcome.message}: the call is gone, so no one else is dialled`,
        };
      }
      if (bridge === undefined) {
        return outcome;
      }
      if (hasEnded(dialog)) {
        return { ok: false, code: 'call-ended', message: 'The call has ended' };
      }
      // The bridge owns the caller's dialog once the destination answers: no BYE from here.
      const bridged = await bridge(destination);
      return bridged.ok
        ? bridged
        : { ...bridged, message: `${outcome.message}; bridging failed: ${bridged.message}` };
    } finally {
      this.transferring = false;
    }
  }

  async sendDtmf(digits: string): Promise<void> {
    const parsed = parseDtmfDigits(digits);
    if (!parsed.ok) {
      throw new TelephonyError(parsed.code, parsed.message);
    }
    const { rtp, dialog } = this.options;
    if (dialog.state === 'terminated') {
      throw new TelephonyError('call-ended', 'The call has ended');
    }
    if (!rtp.canSendDtmf) {
      await this.sendInfo(parsed.steps);
      return;
    }
    const expectedMs = parsed.steps.reduce(
      (sum, step) =>
        sum + (step.kind === 'key' ? DTMF_TONE_MS + DTMF_GAP_MS + 40 : step.durationMs),
      0,
    );
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), expectedMs + DTMF_SLACK_MS);
      timer.unref();
    });
    const sent = await Promise.race([rtp.sendDtmfSteps(parsed.steps), late]);
    clearTimeout(timer);
    if (sent !== true) {
      throw new TelephonyError(
        'dtmf-failed',
        sent === 'late' ? 'The DTMF did not go out (no media clock)' : 'The call media closed',
      );
    }
  }

  private refer(
    referTo: string,
    headers: [string, string][],
    timeoutMs: number,
  ): Promise<ReferOutcome> {
    const { agent, dialog } = this.options;
    return new Promise((resolve) => {
      let settled = false;
      const finish = (outcome: ReferOutcome): void => {
        if (!settled) {
          settled = true;
          this.settleRefer = undefined;
          stopWatching();
          clearTimeout(timer);
          resolve(outcome);
        }
      };
      // Watch before sending: the first NOTIFY may overtake the 202 (RFC 3515 §2.4.4).
      const stopWatching = agent.watchNotify(dialog, (request) => {
        const notify = readReferNotify(request);
        if (notify === undefined) {
          return;
        }
        const status = notify.status;
        if (status !== undefined && status >= 200 && status < 300) {
          finish({ ok: true });
        } else if (status !== undefined && status >= 300) {
          finish({
            ok: false,
            code: 'transfer-failed',
            message: `The transfer target answered ${status}`,
          });
        } else if (notify.terminated) {
          finish({
            ok: false,
            code: 'transfer-failed',
            message: 'The far end ended the transfer without a final status',
          });
        }
      });
      const timer = setTimeout(
        () =>
          finish({
            ok: false,
            code: 'transfer-timeout',
            message: `No final transfer status within ${Math.round(timeoutMs / 1000)} s`,
          }),
        timeoutMs,
      );
      timer.unref();
      this.settleRefer = finish;
      const referredBy = localUri(dialog);
      void agent.dialogs
        .request(dialog, 'REFER', {
          headers: [
            ['Refer-To', referTo],
            ...(referredBy === undefined ? [] : [['Referred-By', referredBy] as [string, string]]),
            ...headers,
          ],
        })
        .then((response) => {
          if (response.status >= 200 && response.status < 300) {
            this.accepted = true;
          } else if (response.status >= 300) {
            finish({
              ok: false,
              code: 'transfer-refused',
              message: `The far end refused the REFER: ${response.status} ${response.reason}`,
              status: response.status,
            });
          }
        })
        .catch((error: unknown) =>
          finish({
            ok: false,
            code: 'transfer-failed',
            message: `REFER not sent: ${String(error)}`,
          }),
        );
    });
  }

  /** DTMF as SIP INFO, one request per key, each answered before the next. */
  private async sendInfo(steps: readonly DtmfStep[]): Promise<void> {
    const { agent, dialog } = this.options;
    for (const step of steps) {
      if (step.kind === 'wait') {
        await sleep(step.durationMs);
        continue;
      }
      const response = await sendInfoDigit(agent.dialogs, dialog, step.digit, DTMF_TONE_MS);
      if (response.status < 200 || response.status >= 300) {
        throw new TelephonyError(
          'dtmf-failed',
          `The far end refused DTMF by INFO: ${response.status} ${response.reason}`,
        );
      }
      await sleep(DTMF_TONE_MS + DTMF_GAP_MS);
    }
  }
}

/** A REFER's outcome; a refusal carries the final status of the REFER itself. */
type ReferOutcome = TransferOutcome | { ok: false; code: string; message: string; status: number };

/** What a refused REFER means (sip-refer.ts), undefined for any other outcome. */
function refusalOf(outcome: ReferOutcome): ReturnType<typeof referRefusal> | undefined {
  return !outcome.ok && 'status' in outcome ? referRefusal(outcome.status) : undefined;
}

/** Read apart from the narrowing of an earlier check: the dialog may end during an await. */
function hasEnded(dialog: SipDialog): boolean {
  return dialog.state === 'terminated';
}

/** The host[:port] of the dialog's peer (its remote target). */
function peerHost(dialog: SipDialog): string | undefined {
  const uri = parseUri(dialog.remoteTarget);
  if (uri === null || !isSipUri(uri)) {
    return undefined;
  }
  return uri.port === undefined ? uri.host : `${uri.host}:${uri.port}`;
}

/** Our URI in the dialog (without tag), for Referred-By. */
function localUri(dialog: SipDialog): string | undefined {
  const party = parseNameAddr(dialog.localParty);
  return party === null ? undefined : `<${formatUri(party.uri)}>`;
}
