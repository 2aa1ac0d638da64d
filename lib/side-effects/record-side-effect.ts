import type { Db } from "@/lib/db";
import type { AuthenticatedKey } from "@/lib/api-keys/authenticate-api-key";
import { newId } from "@/lib/crypto/ids";
import { ProblemError } from "@/lib/http/problem";
import { metrics } from "@/lib/metrics/registry";
import { downstreamKey } from "@/lib/operations/downstream-key";
import { iso, type SqlOperation } from "@/lib/operations/operation-view";
import { throwOperationProblem } from "@/lib/operations/operation-problems";
import type { SideEffectRequest, SideEffectView } from "@/lib/side-effects/side-effect-schemas";

type SqlEffect = Omit<SideEffectView, "createdAt" | "updatedAt"> & { createdAt: string; updatedAt: string };
type SqlAnswer = { code: string; effect?: SqlEffect; op?: SqlOperation; detail?: string; becameUnknown?: boolean };

// Records a side effect of the operation, fenced like complete: one SQL function call checks
// the token against the processing operation (row-locked: a refused report may act on it, see
// tollgate_side_effect_late_report), upserts the effect by
// (tenant, operation, name), moves its state forward only, and audits the change
// (tollgate_record_side_effect). The effect's downstream key is derived from the operation and
// the name, so every attempt and every takeover gets the same one.
export async function recordSideEffect(options: {
  db: Db;
  key: AuthenticatedKey;
  operationId: string;
  name: string;
  input: SideEffectRequest;
  secret: string;
}): Promise<{ effect: SideEffectView; changed: boolean }> {
  const { db, key, operationId, name, input } = options;
  const effectKey = downstreamKey({ secret: options.secret, tenantId: key.tenantId, operationId, effect: name });
  const rows = await db.$queryRaw<{ r: SqlAnswer }[]>`
    SELECT tollgate_record_side_effect(${key.tenantId}, ${key.id}, ${key.tools}::text[], ${operationId}, ${input.fencingToken},
      ${name}, ${input.provider}, ${input.state}, ${input.providerRequestId ?? null}, ${input.providerResourceId ?? null},
      ${effectKey}, ${newId("fx")}, ${`api-key:${key.id}`}) AS r`;
  const r = rows[0]?.r;
  if (!r) throw new Error("tollgate_record_side_effect returned nothing");
  if ((r.code === "created" || r.code === "updated" || r.code === "unchanged") && r.effect) {
    return { effect: effectView(r.effect), changed: r.code !== "unchanged" };
  }
  if (r.code === "side-effect-backwards" && r.effect) {
    throw new ProblemError(
      "side-effect-backwards",
      `The side effect "${name}" is already ${r.effect.state}; it cannot move to ${input.state}. States only move forward: intended → sent → unknown → confirmed | failed.`,
      { extras: { sideEffect: effectView(r.effect) } },
    );
  }
  if (r.code === "side-effect-mismatch" && r.effect) {
    throw new ProblemError(
      "side-effect-mismatch",
      `The side effect "${name}" was recorded with other provider details (provider, request id or resource id); recorded values are never overwritten.`,
      { extras: { sideEffect: effectView(r.effect) } },
    );
  }
  // A refused report that said the effect happened while the operation waited to retry.
  if (r.becameUnknown) metrics().unknowns.inc({ cause: "contradicts-retry" });
  if (r.code === "lease-lost" && r.detail) {
    throw new ProblemError("lease-lost", r.detail, { extras: r.op ? { operationId: r.op.operationId, state: r.op.state } : {} });
  }
  return throwOperationProblem(r.code, r.op, r.detail);
}

function effectView(e: SqlEffect): SideEffectView {
  return {
    name: e.name,
    provider: e.provider,
    downstreamKey: e.downstreamKey,
    state: e.state,
    providerRequestId: e.providerRequestId,
    providerResourceId: e.providerResourceId,
    attempt: e.attempt,
    createdAt: iso(e.createdAt),
    updatedAt: iso(e.updatedAt),
  };
}
