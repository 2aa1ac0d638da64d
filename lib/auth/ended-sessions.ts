import { randomBytes } from "node:crypto";
import type { Db } from "@/lib/db";
import { env } from "@/lib/env";

// A console session is a JWT that stays valid until it expires (TOLLGATE_SESSION_HOURS). Each
// sign-in gets an id of its own (the JWT's `sid`); signing out records it, and
// lib/auth/console-user.ts refuses a recorded id on every request, so a copy of the cookie dies
// with the sign-out. Per session, not per person: signing out in one browser leaves the others.

export function newSessionId(): string {
  return randomBytes(16).toString("base64url");
}

// next-auth rolls a session's JWT forward while it is used (a new expiry on every refresh), so a
// copied cookie could be kept alive past the day its ended_session row is pruned. A session
// therefore ends TOLLGATE_SESSION_HOURS after its sign-in, however it was refreshed: that bounds
// how long an ended session must be remembered. Sessions from before this rule carry no time.
export function sessionEndsAt(signedInAtSeconds: number | undefined, sessionHours: number): Date | null {
  return signedInAtSeconds === undefined ? null : new Date((signedInAtSeconds + sessionHours * 3600) * 1000);
}

export async function endSession(options: { db: Db; sid: string; userId: string; expiresAt: Date | null }): Promise<void> {
  const expiresAt = options.expiresAt ?? new Date(Date.now() + env().TOLLGATE_SESSION_HOURS * 3_600_000);
  if (expiresAt.getTime() <= Date.now()) return;
  // A second sign-out of the same session (two tabs) finds the row there: nothing to add.
  await options.db.endedSession.createMany({ data: [{ sid: options.sid, userId: options.userId, expiresAt }], skipDuplicates: true });
}

// `npm run tollgate -- prune` and the worker's prune job: ended sessions whose JWT has expired anyway. Returns how many.
// Judged by the database's clock with an hour's margin (`now` only for tests): expiresAt was set
// by the web server's clock, whose JWT check ends the session, and a `prune` on a machine whose
// clock runs ahead forgot a sign-out early, reviving a copied cookie until the JWT expired.
export const ENDED_SESSION_MARGIN_MS = 3_600_000;
export async function pruneEndedSessions(db: Db, now: Date | null = null): Promise<number> {
  return db.$executeRaw`
    DELETE FROM ended_session
    WHERE expires_at < coalesce(${now?.toISOString() ?? null}::timestamptz, now()) - make_interval(secs => ${ENDED_SESSION_MARGIN_MS / 1000})`;
}
