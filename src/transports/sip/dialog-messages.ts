import type { ClientTransactionUser } from './client-transactions.js';
import type { SipDialog, SipDialogRequestOptions } from './dialog.js';
import { createResponse, getCSeq, type SipRequest, type SipResponse } from './message.js';
import type { SipTransactionLayer } from './transaction-layer.js';

/** What a dialog-layer UA supports (Allow in 2xx and OPTIONS answers). */
export const DIALOG_ALLOW = 'INVITE, ACK, CANCEL, BYE, OPTIONS, INFO, REFER, UPDATE';

/** Appends `options.headers`, and the body with its Content-Type, to a response. */
export function addBody(response: SipResponse, options: SipDialogRequestOptions): SipResponse {
  for (const [name, value] of options.headers ?? []) {
    response.headers.append(name, value);
  }
  if (options.body !== undefined && options.body.length > 0) {
    response.headers.append('Content-Type', options.contentType ?? 'application/sdp');
    (response as { body: Buffer }).body = options.body;
  }
  return response;
}

/**
 * A 2xx to a dialog-creating or target-refresh request: the To tag, the Record-Route copied
 * (§12.1.1), our Contact, Allow and Supported: timer, and the body.
 */
export function dialogSuccess(
  request: SipRequest,
  dialog: SipDialog,
  options: SipDialogRequestOptions,
): SipResponse {
  const ok = createResponse(request, 200, { toTag: dialog.localTag });
  for (const route of request.headers.getAll('Record-Route')) {
    ok.headers.append('Record-Route', route);
  }
  ok.headers
    .append('Contact', dialog.localContact)
    .append('Allow', DIALOG_ALLOW)
    .append('Supported', 'timer');
  return addBody(ok, options);
}

export function allowsUpdate(message: Pick<SipRequest, 'headers'>): boolean {
  return message.headers.getAll('Allow').some((method) => method.trim().toUpperCase() === 'UPDATE');
}

/**
 * Sends an in-dialog request in a client transaction and resolves with its final response
 * (a synthetic 408 on timeout, 503 on a transport error or when the next hop cannot be
 * resolved). A 2xx to a re-INVITE is ACKed end to end; `onDialogGone` runs on a 481 or 408
 * (§12.2.1.2: the dialog is over).
 */
export function sendInDialog(
  transactions: SipTransactionLayer,
  dialog: SipDialog,
  method: string,
  options: SipDialogRequestOptions,
  onDialogGone: () => void,
): Promise<SipResponse> {
  const target = dialog.nextHop();
  const request = dialog.createRequest(method, options);
  if (target === undefined) {
    return Promise.resolve(createResponse(request, 503, { reason: 'No Route To Peer' }));
  }
  return new Promise((resolve) => {
    let settled = false;
    const settle = (response: SipResponse): void => {
      if (!settled) {
        settled = true;
        resolve(response);
      }
    };
    const user: ClientTransactionUser = {
      onResponse: (response) => {
        if (response.status < 200) {
          return;
        }
        if (method === 'INVITE' && response.status < 300) {
          dialog.refreshTarget(response);
          transactions.sendStateless(dialog.createAck(getCSeq(request)!.seq), target);
        }
        if (response.status === 481 || response.status === 408) {
          onDialogGone();
        }
        settle(response);
      },
      onTimeout: () => {
        onDialogGone(); // a timeout counts as a 408
        settle(createResponse(request, 408));
      },
      onTransportError: () => settle(createResponse(request, 503)),
    };
    transactions.sendRequest(request, target, user);
  });
}
