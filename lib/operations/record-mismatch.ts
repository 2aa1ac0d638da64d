import type { Db } from "@/lib/db";
import { log } from "@/lib/log";

// After a 422 (the key's operation was claimed with other arguments): keep where they differed
// on the operation, so its trace can tell an operator what the agent changed ("args.amount")
// without any value. Only this rare path pays the second statement; the claim itself counted the
// conflict. It is evidence for a person, not state: if it cannot be written, the agent still gets
// its 422, and the latest of two racing 422s may be the one kept.
// `more`: other paths differ beyond those listed.
export async function recordMismatch(db: Db, tenantId: string, operationId: string, paths: string[], more: boolean): Promise<void> {
  try {
    await db.$executeRaw`
      UPDATE operation SET last_mismatch = jsonb_build_object('paths', ${JSON.stringify(paths)}::jsonb, 'more', ${more}::boolean, 'at', now())
      WHERE tenant_id = ${tenantId} AND id = ${operationId}`;
  } catch (error) {
    log().warn({ err: error, operationId }, "could not record where a 422's arguments differed");
  }
}
