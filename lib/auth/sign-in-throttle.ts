import { Prisma } from "@/lib/generated/prisma/client";
import type { Db } from "@/lib/db";
import { sha256Hex } from "@/lib/crypto/digest";
export { SIGN_IN_LOCKED } from "@/lib/auth/sign-in-lock-code";

// Online password guessing against the console, bounded per email: FREE_FAILURES failures within
// WINDOW lock the email for 30 s, and each further failure doubles that, up to 15 minutes. A
// locked email is refused before its password is checked (so a guess during the lock tells
// nothing, and costs no scrypt). A success clears the count. Emails that belong to nobody are
// counted alike, so a lock says nothing about who has an account. The price is that a stranger
// can keep a known email locked (15 minutes at most per failure); single sign-on is not affected.
// State lives in PostgreSQL, so every instance sees the same count.

const FREE_FAILURES = 5;
const WINDOW_MINUTES = 15;
const FIRST_LOCK_SECONDS = 30;
const MAX_LOCK_SECONDS = 15 * 60;

const digestOf = (email: string) => sha256Hex(`tollgate-sign-in:${email}`);

// Seconds until the email may try again, or 0.
export async function signInLockedFor(db: Db, email: string): Promise<number> {
  const rows = await db.$queryRaw<{ s: number }[]>`
    SELECT ceil(extract(epoch FROM locked_until - now()))::int AS s FROM sign_in_failure
    WHERE email_digest = ${digestOf(email)} AND locked_until > now()`;
  return rows[0]?.s ?? 0;
}

// One statement, so concurrent failures on several instances all count: a failure after a quiet
// WINDOW starts the count again. (The count after this failure is spelled twice: SET cannot read
// a column it sets in the same statement.)
export async function recordSignInFailure(db: Db, email: string): Promise<{ failures: number; lockedForSeconds: number }> {
  const next = Prisma.sql`(CASE WHEN f.last_failure_at < now() - make_interval(mins => ${WINDOW_MINUTES}::int) THEN 1 ELSE f.failures + 1 END)`;
  const rows = await db.$queryRaw<{ failures: number; s: number | null }[]>`
    INSERT INTO sign_in_failure AS f (email_digest, failures, last_failure_at) VALUES (${digestOf(email)}, 1, now())
    ON CONFLICT (email_digest) DO UPDATE SET
      failures = ${next},
      last_failure_at = now(),
      locked_until = CASE WHEN ${next} >= ${FREE_FAILURES}::int
        THEN now() + make_interval(secs => least(${MAX_LOCK_SECONDS}::int, ${FIRST_LOCK_SECONDS}::int * power(2, least(${next} - ${FREE_FAILURES}::int, 20))))
        END
    RETURNING f.failures, ceil(extract(epoch FROM f.locked_until - now()))::int AS s`;
  return { failures: rows[0]?.failures ?? 0, lockedForSeconds: rows[0]?.s ?? 0 };
}

export async function clearSignInFailures(db: Db, email: string): Promise<void> {
  await db.$executeRaw`DELETE FROM sign_in_failure WHERE email_digest = ${digestOf(email)}`;
}

// `prune` and the worker's prune job: counts nobody added to for a day.
export async function pruneSignInFailures(db: Db): Promise<number> {
  return db.$executeRaw`DELETE FROM sign_in_failure WHERE last_failure_at < now() - interval '1 day' AND (locked_until IS NULL OR locked_until < now())`;
}
