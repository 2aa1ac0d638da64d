import pg from "pg";

// While a worker process lives it holds a session advisory lock named after its job-queue pool
// id, on a connection of its own. PostgreSQL releases it the moment that connection dies (the
// process was killed, the machine lost power), which is how the recovery sweep
// (tollgate_release_abandoned_jobs) tells a dead worker's locked jobs from a slow one's.
//
// A connection that dies silently (a NAT's idle timeout, a failover whose old primary vanished)
// raises no 'error': the lock was gone at the server while this worker went on taking jobs, and
// every other worker's sweep released them and ran them a second time beside it. So the
// connection is asked a trivial query every `checkEveryMs`, answered within `checkTimeoutMs` or
// taken as lost; both well inside the sweep's 30 s, so the worker stops before its jobs count as
// abandoned.
//
// A worker process runs two job runners (lib/worker/run-worker.ts), each a pool of its own: one
// connection holds a lock for each pool id, and loses them all together.
export async function holdLivenessLock(options: {
  databaseUrl: string;
  poolId: string | readonly string[];
  onLost: (error: Error) => void;
  checkEveryMs?: number;
  checkTimeoutMs?: number;
}): Promise<{ release: () => Promise<void> }> {
  const client = new pg.Client({
    connectionString: options.databaseUrl,
    application_name: "tollgate-worker-liveness",
    // The kernel's own probes too, after 10 s idle rather than Linux's default 2 hours.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    connectionTimeoutMillis: 10_000,
  });
  let releasing = false;
  const checks: { timer?: NodeJS.Timeout } = {}; // set once the lock is held; the loss may come first
  const lost = (error: Error) => {
    if (releasing) return;
    releasing = true;
    clearInterval(checks.timer);
    options.onLost(error);
  };
  client.on("error", lost);
  try {
    await client.connect();
    await client.query("SELECT pg_advisory_lock(tollgate_worker_lock_class(), hashtext(id)) FROM unnest($1::text[]) AS id", [
      typeof options.poolId === "string" ? [options.poolId] : [...options.poolId],
    ]);
  } catch (error) {
    // Not taken: the connection goes too, quietly (the caller hears of it by this throw).
    releasing = true;
    await end(client);
    throw error;
  }
  let asking = false;
  checks.timer = setInterval(() => {
    if (asking) return;
    asking = true;
    // query_timeout is pg's per-query option (not in its types): only the check is bounded, not
    // the lock's own query at start.
    client
      .query({ text: "SELECT 1", query_timeout: options.checkTimeoutMs ?? 5_000 } as pg.QueryConfig)
      .then(
        () => undefined,
        (error: Error) => lost(error),
      )
      .finally(() => (asking = false));
  }, options.checkEveryMs ?? 5_000);
  checks.timer.unref();
  return {
    release: async () => {
      releasing = true;
      clearInterval(checks.timer);
      await end(client);
    },
  };
}

// end() waits for the server to see the connection go, and a connection that carries nothing any
// more never answers: the stopping worker would wait for ever. Two seconds, then the socket goes.
async function end(client: pg.Client): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const ended = await Promise.race([
    client.end().then(
      () => true,
      () => true,
    ),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), 2_000))),
  ]);
  clearTimeout(timer);
  if (!ended) client.connection.stream.destroy();
}
