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
