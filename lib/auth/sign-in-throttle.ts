import { Prisma } from "@/lib/generated/prisma/client";
import type { Db } from "@/lib/db";
import { sha256Hex } from "@/lib/crypto/digest";
export { SIGN_IN_LOCKED } from "@/lib/auth/sign-in-lock-code";

// Online password guessing against the console, bounded per email: FREE_FAILURES failures within
// WINDOW lock the email for 30 s, and each further failure doubles that, up to 15 minutes; the
// count starts again only after WINDOW without a failure or a lock. A try is counted *before*
// its password is checked, under the row's lock, so a burst of parallel guesses cannot all pass
// the check before the failures land (code review): once the fifth is counted, the rest are
// refused unchecked (and cost no scrypt). A success clears the count. Emails that belong to
// nobody are counted alike, so a lock says nothing about who has an account. The price is that a
// stranger can keep a known email locked (15 minutes at most per failure); single sign-on is not
// affected. State lives in PostgreSQL, so every instance sees the same count.

const FREE_FAILURES = 5;
const WINDOW_MINUTES = 15;
const FIRST_LOCK_SECONDS = 30;
const MAX_LOCK_SECONDS = 15 * 60;

const digestOf = (email: string) => sha256Hex(`tollgate-sign-in:${email}`);

// Counts this try, unless the email is locked. `allowed`: check the password (and clear the count
// if it is right); otherwise refuse at once. One transaction: the row exists first, so every
// concurrent try waits on its lock and sees the ones before it.
export async function takeSignInTry(db: Db, email: string): Promise<{ allowed: boolean; failures: number; lockedForSeconds: number }> {
  const digest = digestOf(email);
  const quiet = Prisma.sql`greatest(last_failure_at, coalesce(locked_until, last_failure_at)) < now() - make_interval(mins => ${WINDOW_MINUTES}::int)`;
  const next = Prisma.sql`(CASE WHEN ${quiet} THEN 1 ELSE failures + 1 END)`;
  const [, before, after] = await db.$transaction([
    db.$executeRaw`INSERT INTO sign_in_failure (email_digest, failures, last_failure_at) VALUES (${digest}, 0, now()) ON CONFLICT (email_digest) DO NOTHING`,
    db.$queryRaw<{ locked: boolean }[]>`SELECT coalesce(locked_until > now(), false) AS locked FROM sign_in_failure WHERE email_digest = ${digest} FOR UPDATE`,
    db.$queryRaw<{ failures: number; s: number | null }[]>`
      UPDATE sign_in_failure SET
        failures = CASE WHEN locked_until > now() THEN failures ELSE ${next} END,
        last_failure_at = CASE WHEN locked_until > now() THEN last_failure_at ELSE now() END,
        locked_until = CASE WHEN locked_until > now() THEN locked_until
          WHEN ${next} >= ${FREE_FAILURES}::int
            THEN now() + make_interval(secs => least(${MAX_LOCK_SECONDS}::int, ${FIRST_LOCK_SECONDS}::int * power(2, least(${next} - ${FREE_FAILURES}::int, 20))))
          END
      WHERE email_digest = ${digest}
      RETURNING failures, ceil(extract(epoch FROM locked_until - now()))::int AS s`,
  ]);
  return { allowed: !before[0]?.locked, failures: after[0]?.failures ?? 0, lockedForSeconds: after[0]?.s ?? 0 };
}

export async function clearSignInFailures(db: Db, email: string): Promise<void> {
  await db.$executeRaw`DELETE FROM sign_in_failure WHERE email_digest = ${digestOf(email)}`;
}

// `prune` and the worker's prune job: counts nobody added to for a day.
export async function pruneSignInFailures(db: Db): Promise<number> {
  return db.$executeRaw`DELETE FROM sign_in_failure WHERE last_failure_at < now() - interval '1 day' AND (locked_until IS NULL OR locked_until < now())`;
}
