import type { Db } from "@/lib/db";

// Polls the database clock (the one the server decides with) until the operation's lease is
// over by a margin, instead of sleeping a fixed time on a machine that may be slow.
export async function waitUntilLeaseExpired(db: Db, operationId: string, marginMs = 200): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const rows = await db.$queryRaw<{ expired: boolean }[]>`
      SELECT now() > lease_expires_at + make_interval(secs => ${marginMs / 1000}) AS expired FROM operation WHERE id = ${operationId}`;
    if (rows[0]?.expired) return;
    if (Date.now() > deadline) throw new Error(`lease of ${operationId} did not expire in time`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// Ends the operation's current lease now, as if its holder had stalled past it: for tests whose
// holder must first make a few requests under a live lease, which a 1 s lease cannot promise on
// a loaded machine. The database clock decides, as it does for real leases.
export async function endLease(db: Db, operationId: string): Promise<void> {
  const ended = await db.$executeRaw`
    UPDATE operation SET lease_expires_at = now() - interval '1 second' WHERE id = ${operationId} AND state = 'processing'`;
  if (ended !== 1) throw new Error(`operation ${operationId} holds no lease to end`);
  await db.$executeRaw`
    UPDATE attempt SET lease_expires_at = now() - interval '1 second'
    WHERE operation_id = ${operationId} AND ended_at IS NULL AND lease_expires_at > now()`;
}
