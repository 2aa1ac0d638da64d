import type { Db } from "@/lib/db";
import { metrics } from "@/lib/metrics/registry";
import type { OperationView, ResolveRequest } from "@/lib/operations/operation-schemas";
import { throwOperationProblem } from "@/lib/operations/operation-problems";
import { ProblemError } from "@/lib/http/problem";
import { operationLogFields, operationView, type SqlOperation } from "@/lib/operations/operation-view";
import type { LogFields } from "@/lib/http/request-context";

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
  // How many attempts the person had seen (the console sends it): if another ran since, what they
  // checked was about an earlier one, and the resolve is refused (409 invalid-state).
  seenAttempts?: number;
  // The flag the person saw on it (its time), null for none, undefined when not said (the admin
  // API): an operator's resolve takes a flag down, so one raised or cleared since is a 409.
  seenFlaggedAt?: string | null;
  annotate?: (fields: LogFields) => void;
}): Promise<OperationView> {
  const { db, input } = options;
  const rows = await db.$queryRaw<{ r: { code: string; op?: SqlOperation; changed?: "flag"; flagged?: boolean } }[]>`
    SELECT tollgate_resolve(${options.tenantId}, ${options.operationId}, ${input.outcome}, ${input.reason},
      ${input.resourceId ?? null}, ${input.evidence ?? null}, ${options.actor}, ${options.via ?? "operator"},
      ${options.seenAttempts ?? null}::int, ${options.seenFlaggedAt !== undefined}, ${options.seenFlaggedAt ?? null}::timestamptz) AS r`;
  const r = rows[0]?.r;
  if (!r) throw new Error("tollgate_resolve returned nothing");
  if (r.op) options.annotate?.(operationLogFields(r.op));
  if (r.code === "resolved" && r.op) {
    metrics().resolutions.inc({ outcome: input.outcome });
    return operationView(r.op);
  }
  if (r.code === "operation-changed" && r.op && r.changed === "flag") {
    throw new ProblemError(
      "invalid-state",
      r.flagged
        ? "This operation was flagged since you looked (or flagged again): a resolve takes its flag down, so read the flag on the operation before you resolve it."
        : "This operation's flag was taken down since you looked: look at the operation as it stands before you resolve it.",
      { extras: { operationId: r.op.operationId, state: r.op.state, flagged: r.flagged } },
    );
  }
  if (r.code === "operation-changed" && r.op) {
    throw new ProblemError(
      "invalid-state",
      `Attempt ${r.op.attempts} of this operation ran since you looked (you saw ${options.seenAttempts ?? 0}): what you checked was about an earlier attempt. Look at the operation as it stands before you resolve it.`,
      { extras: { operationId: r.op.operationId, state: r.op.state, attempts: r.op.attempts } },
    );
  }
  if (r.code === "attempts-exhausted" && r.op) {
    throw new ProblemError(
      "invalid-state",
      `This operation has run ${r.op.attempts} attempts, the most one may run, so it cannot be retried: resolve it as succeeded or failed.`,
      { extras: { operationId: r.op.operationId, state: r.op.state, attempts: r.op.attempts } },
    );
  }
  return throwOperationProblem(r.code, r.op);
}
