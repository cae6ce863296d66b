import type { Doc, Resource } from '../store/resource-store.js';

export const DEFAULT_SESSION_EXPIRATION_SECONDS = 86_400;

/** A session ends when marked `completed` or once `expirationSeconds` have passed since creation. */
export function isSessionExpired(session: Doc & { createdAt: string }, now: Date): boolean {
  if (session.status === 'completed') {
    return true;
  }
  const seconds =
    typeof session.expirationSeconds === 'number'
      ? session.expirationSeconds
      : DEFAULT_SESSION_EXPIRATION_SECONDS;
  return now.getTime() >= Date.parse(session.createdAt) + seconds * 1000;
}

/** The session as the API shows it: an expired one reads `completed` (the row is not rewritten). */
export function presentSession(session: Resource, now: Date): Resource {
  return session.status !== 'completed' && isSessionExpired(session, now)
    ? { ...session, status: 'completed' }
    : session;
}
