import type { Db } from "@/lib/db";
import { metrics } from "@/lib/metrics/registry";
import type { OperationView, ResolveRequest } from "@/lib/operations/operation-schemas";
import { throwOperationProblem } from "@/lib/operations/operation-problems";
import { operationView, type SqlOperation } from "@/lib/operations/operation-view";

// Settles an unknown outcome (or a processing one whose lease expired). The API's admin
// route and the console both call this, so the rules (reason required, allowed states,
// compare-and-set under the row lock, audit in the same transaction) exist once.
export async function resolveOperation(options: {
  db: Db;
  tenantId: string;
  operationId: string;
  input: ResolveRequest;
  actor: string;
  via?: "operator" | "webhook" | "probe";
}): Promise<OperationView> {
  const { db, input } = options;
  const rows = await db.$queryRaw<{ r: { code: string; op?: SqlOperation } }[]>`
    SELECT tollgate_resolve(${options.tenantId}, ${options.operationId}, ${input.outcome}, ${input.reason},
      ${input.resourceId ?? null}, ${input.evidence ?? null}, ${options.actor}, ${options.via ?? "operator"}) AS r`;
  const r = rows[0]?.r;
  if (!r) throw new Error("tollgate_resolve returned nothing");
  if (r.code === "resolved" && r.op) {
    metrics().resolutions.inc({ outcome: input.outcome });
    return operationView(r.op);
  }
  return throwOperationProblem(r.code, r.op);
}
