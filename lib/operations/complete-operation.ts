import type { Db } from "@/lib/db";
import type { AuthenticatedKey } from "@/lib/api-keys/authenticate-api-key";
import { sha256Hex } from "@/lib/crypto/digest";
import { hotQuery, type HotStatement } from "@/lib/db/hot-sql";
import { metrics } from "@/lib/metrics/registry";
import { canonicalJson, type Json } from "@/lib/operations/canonical-json";
import type { CompleteRequest, OperationView } from "@/lib/operations/operation-schemas";
import { operationLogFields, operationView, type SqlOperation } from "@/lib/operations/operation-view";
import type { LogFields } from "@/lib/http/request-context";
import { throwOperationProblem } from "@/lib/operations/operation-problems";

const COMPLETE_SQL: HotStatement = {
  name: "tollgate_complete",
  text: "SELECT tollgate_complete($1::text, $2::text, $3::text[], $4::text, $5::bigint, $6::text, $7::boolean, $8::jsonb, $9::jsonb, $10::jsonb, $11::text, $12::text) AS r",
};

// becameUnknown: a report that contradicted the retry the operation waited for made it unknown.
type SqlComplete = { code: string; op?: SqlOperation; detail?: string; state?: string; becameUnknown?: boolean };

// Records the outcome the lease holder reports. One SQL function call: it checks the fencing
// token, recognises a repeated complete by its digest, and writes operation, attempt and
// audit event together (see tollgate_complete in the migrations).
export async function completeOperation(options: {
  db: Db;
  key: AuthenticatedKey;
  operationId: string;
  input: CompleteRequest;
  // The request's log line: told what the operation is, refusals (409 lease-lost …) included.
  annotate?: (fields: LogFields) => void;
}): Promise<{ view: OperationView; changed: boolean }> {
  const { db, key, input } = options;
  const result = normalizedResult(input);
  const provider = normalizedProvider(input);
  const digest = sha256Hex(
    canonicalJson({
      fencingToken: input.fencingToken.toString(),
      outcome: input.outcome,
      retryable: input.retryable ?? false,
      result,
      provider: provider as Json,
      error: (input.error ?? null) as Json,
    }),
  );
  const rows = await hotQuery<{ r: SqlComplete }>(db, COMPLETE_SQL, [
    key.tenantId, key.id, key.tools, options.operationId, input.fencingToken.toString(), input.outcome, input.retryable ?? false,
    jsonOrNull(result), jsonOrNull(input.error), jsonOrNull(provider), digest, `api-key:${key.id}`,
  ]);
  const r = rows[0]?.r;
  if (!r) throw new Error("tollgate_complete returned nothing");
  if (r.op) options.annotate?.(operationLogFields(r.op));
  metrics().completes.inc({ outcome: input.outcome, result: r.code });
  if (r.code === "completed" && r.state === "unknown") metrics().unknowns.inc({ cause: "reported" });
  if (r.becameUnknown) metrics().unknowns.inc({ cause: "contradicts-retry" });
  if ((r.code === "completed" || r.code === "repeated" || r.code === "agrees") && r.op) {
    return { view: operationView(r.op), changed: r.code === "completed" };
  }
  return throwOperationProblem(r.code, r.op, r.detail);
}

// The stored result always has all three fields, so replays have one shape.
function normalizedResult(input: CompleteRequest): Json {
  if (!input.result && input.outcome !== "succeeded") return null;
  return {
    statusCode: input.result?.statusCode ?? null,
    body: (input.result?.body ?? null) as Json,
    resourceId: input.result?.resourceId ?? input.provider?.resourceId ?? null,
  };
}

// `provider: {}` says what no `provider` says: the same report, one digest (it was a different
// report, so its repeat was 409 already-resolved and the operation flagged).
function normalizedProvider(input: CompleteRequest): CompleteRequest["provider"] | null {
  const provider = input.provider;
  return provider && (provider.requestId !== undefined || provider.resourceId !== undefined) ? provider : null;
}

function jsonOrNull(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}
