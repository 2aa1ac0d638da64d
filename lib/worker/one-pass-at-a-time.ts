import type { JobHelpers } from "graphile-worker";

// "Pass": the advisory-lock class of periodic passes (two-int keys; the liveness locks have their own).
const PASS_LOCK_CLASS = 0x50617373;

// Runs `work` unless a pass of the same name is running on any worker, and says which. A periodic
// job books its next run before it works, so a pass longer than the tick (a slow provider under
// the probes) had the next ones start beside it, each taking a worker slot from deliveries.
// The lock is a transaction's: held on a connection of the job queue's pool, idle in its
// transaction while the work runs on the worker's own pool, and let go by the commit, by a
// rollback after an error, or with the connection if the worker dies. (The transaction takes no
// snapshot between its statements, so it holds back no vacuum.)
export async function onePassAtATime(helpers: Pick<JobHelpers, "withPgClient">, name: string, work: () => Promise<void>): Promise<"ran" | "skipped"> {
  return helpers.withPgClient(async (client) => {
    await client.query("BEGIN");
    try {
      const { rows } = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_xact_lock($1::int, hashtext($2)) AS ok", [PASS_LOCK_CLASS, name]);
      if (!rows[0]?.ok) return "skipped";
      await work();
      return "ran";
    } finally {
      await client.query("COMMIT").catch(() => undefined);
    }
  });
}
