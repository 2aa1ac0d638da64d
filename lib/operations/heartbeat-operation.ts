import type { Db } from "@/lib/db";
import type { AuthenticatedKey } from "@/lib/api-keys/authenticate-api-key";
import { throwOperationProblem } from "@/lib/operations/operation-problems";
import { iso, type SqlOperation } from "@/lib/operations/operation-view";

// Extends the current attempt's lease by the tool's leaseSeconds; one SQL statement.
export async function heartbeatOperation(options: {
  db: Db;
  key: AuthenticatedKey;
  operationId: string;
  fencingToken: bigint;
}): Promise<{ leaseExpiresAt: string }> {
  const { db, key } = options;
  const rows = await db.$queryRaw<{ r: { code: string; leaseExpiresAt?: string; op?: SqlOperation } }[]>`
    SELECT tollgate_heartbeat(${key.tenantId}, ${key.id}, ${key.tools}::text[], ${options.operationId}, ${options.fencingToken}) AS r`;
  const r = rows[0]?.r;
  if (!r) throw new Error("tollgate_heartbeat returned nothing");
  if (r.code === "ok" && r.leaseExpiresAt) return { leaseExpiresAt: iso(r.leaseExpiresAt) };
  return throwOperationProblem(r.code, r.op);
}
