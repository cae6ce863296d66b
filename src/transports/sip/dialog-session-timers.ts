import type { SipDialog, SipDialogRequestOptions } from './dialog.js';
import type { SipRequest, SipResponse } from './message.js';
import {
  MIN_SESSION_EXPIRES_S,
  SessionTimer,
  formatSessionExpires,
  negotiateUasSessionTimer,
  parseSessionExpires,
  type SessionTimerDecision,
  type SessionTimerPolicy,
} from './session-timer.js';
import type { TimerScheduler } from './timers.js';

const DEFAULT_SESSION_EXPIRES_S = 1800;

/** What the session timers keep of a dialog (the dialog layer's entry). */
export interface SessionTimedDialog {
  readonly dialog: SipDialog;
  sessionTimer?: SessionTimer;
  /** The last SDP we sent, offered again by re-INVITE refreshes. */
  localSdp?: Buffer;
  peerAllowsUpdate: boolean;
}

/** Session-Expires and Min-SE for an INVITE we send (RFC 4028 §7.1). */
export interface UacSessionTimerTerms {
  readonly expiresSeconds: number;
  readonly minSeconds: number;
}

export interface DialogSessionTimersOptions {
  readonly scheduler: TimerScheduler;
  /** Our policy, or false to neither ask for nor honour session timers. */
  readonly policy: SessionTimerPolicy | false | undefined;
  /** Sends an in-dialog request (a refresh) and resolves with its final response. */
  readonly send: (
    dialog: SipDialog,
    method: string,
    options: SipDialogRequestOptions,
  ) => Promise<SipResponse>;
  /** No refresh came in time: the dialog layer sends a BYE (reason `session-expired`). */
  readonly expire: (dialog: SipDialog) => void;
}

/**
 * Session timers (RFC 4028) of the dialog layer's dialogs, on both sides: the UAS decision for
 * an incoming INVITE and its refreshes (§9), the terms of our own INVITE (§7.1) and what its 2xx
 * chose (§7.2), and the refresh we send when we are the refresher (§7.4: UPDATE when the peer
 * allows it, else a re-INVITE with our last SDP).
 */
export class DialogSessionTimers {
  constructor(private readonly options: DialogSessionTimersOptions) {}

  /** The UAS decision for an incoming INVITE (none when timers are off). */
  negotiate(request: SipRequest): SessionTimerDecision {
    const { policy } = this.options;
    return policy === false ? { kind: 'none' } : negotiateUasSessionTimer(request, policy);
  }

  /** Starts the timer a UAS decision asked for. */
  startUas(entry: SessionTimedDialog, decision: SessionTimerDecision): void {
    if (decision.kind === 'timer') {
      this.start(entry, decision.intervalSeconds, decision.refresher === 'uas');
    }
  }

  /**
   * A refresh from the peer (re-INVITE or UPDATE) that we answer 2xx: adds the renewed terms
   * to `ok` and restarts the timer.
   */
  onPeerRefresh(entry: SessionTimedDialog, request: SipRequest, ok: SipResponse): void {
    if (entry.sessionTimer === undefined || this.options.policy === false) {
      return;
    }
    const decision = negotiateUasSessionTimer(request, this.options.policy);
    if (decision.kind === 'timer') {
      decision.headers.forEach(([name, value]) => ok.headers.append(name, value));
      entry.sessionTimer.refreshed(decision.intervalSeconds, decision.refresher === 'uas');
    }
  }

  /** What our INVITEs ask for: our default interval and our Min-SE (undefined when off). */
  uacTerms(): UacSessionTimerTerms | undefined {
    const { policy } = this.options;
    if (policy === false) {
      return undefined;
    }
    const minSeconds = Math.max(MIN_SESSION_EXPIRES_S, policy?.minSeconds ?? 0);
    const expiresSeconds = Math.max(
      minSeconds,
      policy?.defaultSeconds ?? DEFAULT_SESSION_EXPIRES_S,
    );
    return { expiresSeconds, minSeconds };
  }

  /**
   * The 2xx to our INVITE (§7.2): with Session-Expires the session has a timer, refreshed by us
   * when `refresher=uac` (or none was named), watched for expiry when `refresher=uas`.
   */
  startUac(entry: SessionTimedDialog, response: SipResponse): void {
    const value = response.headers.get('Session-Expires');
    const terms = value === undefined ? null : parseSessionExpires(value);
    // A zero interval would refresh without pause: it is read as no timer.
    if (terms === null || terms.deltaSeconds === 0 || this.options.policy === false) {
      return;
    }
    this.start(entry, terms.deltaSeconds, terms.refresher !== 'uas');
  }

  private start(entry: SessionTimedDialog, intervalSeconds: number, weRefresh: boolean): void {
    entry.sessionTimer = new SessionTimer(
      this.options.scheduler,
      {
        onRefreshDue: () => void this.refresh(entry),
        onExpired: () => this.options.expire(entry.dialog),
      },
      intervalSeconds,
      weRefresh,
    );
    entry.sessionTimer.start();
  }

  /**
   * §7.4: we are the refresher. The refresh names us (`refresher=uac`: we send it) so that the
   * role stays with us; a Session-Expires in its 2xx may change the terms.
   */
  private async refresh(entry: SessionTimedDialog): Promise<void> {
    const timer = entry.sessionTimer!;
    const method = entry.peerAllowsUpdate ? 'UPDATE' : 'INVITE';
    const headers: [string, string][] = [
      [
        'Session-Expires',
        formatSessionExpires({ deltaSeconds: timer.intervalSeconds, refresher: 'uac' }),
      ],
      ['Supported', 'timer'],
    ];
    const response = await this.options.send(entry.dialog, method, {
      headers,
      ...(method === 'INVITE' && entry.localSdp !== undefined ? { body: entry.localSdp } : {}),
    });
    if (entry.dialog.state === 'terminated') {
      return;
    }
    if (response.status >= 200 && response.status < 300) {
      const value = response.headers.get('Session-Expires');
      const terms = value === undefined ? null : parseSessionExpires(value);
      if (terms === null) {
        timer.refreshed();
      } else {
        timer.refreshed(terms.deltaSeconds, terms.refresher !== 'uas');
      }
    } else {
      // The refresh failed: keep the session only until the current interval runs out.
      timer.refreshed(timer.intervalSeconds, false);
    }
  }
}
