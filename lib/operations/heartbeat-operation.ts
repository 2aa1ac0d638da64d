import type { Db } from "@/lib/db";
import type { AuthenticatedKey } from "@/lib/api-keys/authenticate-api-key";
import { hotQuery, type HotStatement } from "@/lib/db/hot-sql";
import { throwOperationProblem } from "@/lib/operations/operation-problems";
import { iso, operationLogFields, type SqlOperation } from "@/lib/operations/operation-view";
import type { LogFields } from "@/lib/http/request-context";

const HEARTBEAT_SQL: HotStatement = {
  name: "tollgate_heartbeat",
  text: "SELECT tollgate_heartbeat($1::text, $2::text, $3::text[], $4::text, $5::bigint) AS r",
};

// Extends the current attempt's lease by the tool's leaseSeconds; one SQL statement.
export async function heartbeatOperation(options: {
  db: Db;
  key: AuthenticatedKey;
  operationId: string;
  fencingToken: bigint;
  annotate?: (fields: LogFields) => void;
}): Promise<{ leaseExpiresAt: string }> {
  const { db, key } = options;
  const rows = await hotQuery<{ r: { code: string; leaseExpiresAt?: string; op?: SqlOperation; log?: LogFields } }>(db, HEARTBEAT_SQL, [
    key.tenantId, key.id, key.tools, options.operationId, options.fencingToken.toString(),
  ]);
  const r = rows[0]?.r;
  if (!r) throw new Error("tollgate_heartbeat returned nothing");
  if (r.log) options.annotate?.({ operationId: options.operationId, ...r.log, workflowId: r.log.workflowId ?? undefined });
  else if (r.op) options.annotate?.(operationLogFields(r.op));
  if (r.code === "ok" && r.leaseExpiresAt) return { leaseExpiresAt: iso(r.leaseExpiresAt) };
  return throwOperationProblem(r.code, r.op);
}
