import { ProblemError } from "@/lib/http/problem";
import { iso, type SqlOperation } from "@/lib/operations/operation-view";

// Turns the problem codes the operation SQL functions return into problem+json errors.
export function throwOperationProblem(code: string, op?: SqlOperation, detail?: string): never {
  const extras = op ? { operationId: op.operationId, state: op.state } : {};
  switch (code) {
    case "unauthorized":
      throw new ProblemError("unauthorized", "The API key is unknown or revoked.", { headers: { "www-authenticate": 'Bearer realm="tollgate"' } });
    // The SQL says "forbidden" when the key is limited to other tools. Such a key cannot read the
    // operation (404), so it must not learn here that it exists either.
    case "forbidden":
    case "operation-not-found":
      throw new ProblemError("operation-not-found", "No operation with this id exists in your tenant.");
    case "lease-lost":
      throw new ProblemError(
        "lease-lost",
        "This fencing token no longer holds the operation: a newer attempt took over, or the lease ran out and the outcome became unknown. Stop and do not report further.",
        { extras },
      );
    case "already-resolved":
      throw new ProblemError("already-resolved", detail ?? "The operation was already resolved differently.", { extras });
    case "invalid-state":
      throw new ProblemError(
        "invalid-state",
        `Only an unknown operation, or a processing one whose lease has expired, can be resolved; this one is ${op?.state ?? "in another state"}${settledBy(op)}.`,
        { extras },
      );
  }
  throw new Error(`operation SQL returned an unexpected answer: ${code}`);
}

// Who settled it, when and why, for the person whose resolve came second (an operator's form,
// an admin script): ", resolved as failed by user:ana@example.com at … (reason: …)".
function settledBy(op?: SqlOperation): string {
  const r = op?.resolution;
  if (!r) return "";
  const reason = r.reason ? ` (reason: ${r.reason.length > 200 ? `${r.reason.slice(0, 200)}…` : r.reason})` : "";
  return `, resolved as ${r.outcome} by ${r.by} at ${iso(r.at)}${reason}`;
}
