import pg from "pg";

// While a worker process lives it holds a session advisory lock named after its job-queue pool
// id, on a connection of its own. PostgreSQL releases it the moment that connection dies (the
// process was killed, the machine lost power), which is how the recovery sweep
// (tollgate_release_abandoned_jobs) tells a dead worker's locked jobs from a slow one's.
export async function holdLivenessLock(options: { databaseUrl: string; poolId: string; onLost: (error: Error) => void }): Promise<{ release: () => Promise<void> }> {
  const client = new pg.Client({ connectionString: options.databaseUrl, application_name: "tollgate-worker-liveness" });
  let releasing = false;
  client.on("error", (error) => {
    if (!releasing) options.onLost(error);
  });
  try {
    await client.connect();
    await client.query("SELECT pg_advisory_lock(tollgate_worker_lock_class(), hashtext($1))", [options.poolId]);
  } catch (error) {
    // Not taken: the connection goes too, quietly (the caller hears of it by this throw).
    releasing = true;
    await client.end().catch(() => undefined);
    throw error;
  }
  return {
    release: async () => {
      releasing = true;
      await client.end().catch(() => undefined);
    },
  };
}
