import type { Db } from "@/lib/db";
import { sha256Hex } from "@/lib/crypto/digest";
import { operationLogFields, operationView, type SqlOperation } from "@/lib/operations/operation-view";
import type { LogFields } from "@/lib/http/request-context";
import type { OperationView } from "@/lib/operations/operation-schemas";

// Status views only: never the fencing token, never the key (which is not even stored).
// `tools` is the API key's tool list: a key limited to some tools sees only their operations
// (the others answer 404, as another tenant's would); empty means every tool.
// `annotate` tells the request's log line which operation it read (tool, attempt, workflow, key digest).
export async function getOperation(options: {
  db: Db;
  tenantId: string;
  tools: string[];
  operationId: string;
  annotate?: (fields: LogFields) => void;
}): Promise<OperationView | null> {
  const rows = await options.db.$queryRaw<{ v: SqlOperation }[]>`
    SELECT tollgate_op_view(o) AS v FROM operation o WHERE o.id = ${options.operationId} AND o.tenant_id = ${options.tenantId}
      AND (cardinality(${options.tools}::text[]) = 0 OR o.tool = ANY(${options.tools}::text[]))`;
  if (rows[0]) options.annotate?.(operationLogFields(rows[0].v));
  return rows[0] ? operationView(rows[0].v) : null;
}

// Finds an operation by its idempotency scope: the caller's tenant and principal, a tool and the key.
export async function findOperationByKey(options: {
  db: Db;
  tenantId: string;
  principal: string;
  tools: string[];
  tool: string;
  idempotencyKey: string;
  annotate?: (fields: LogFields) => void;
}): Promise<OperationView | null> {
  if (options.tools.length > 0 && !options.tools.includes(options.tool)) return null;
  const rows = await options.db.$queryRaw<{ v: SqlOperation }[]>`
    SELECT tollgate_op_view(o) AS v FROM operation o
    WHERE o.tenant_id = ${options.tenantId} AND o.principal = ${options.principal} AND o.tool = ${options.tool}
      AND o.key_digest = ${sha256Hex(options.idempotencyKey)}`;
  if (rows[0]) options.annotate?.(operationLogFields(rows[0].v));
  return rows[0] ? operationView(rows[0].v) : null;
}
