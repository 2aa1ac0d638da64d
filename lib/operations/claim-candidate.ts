import { newOperationId } from "@/lib/crypto/ids";
import { downstreamKey } from "@/lib/operations/downstream-key";

// A claim sends tollgate_claim the id and downstream key the operation gets *if* this claim
// creates it: the SQL function decides in the same round trip. Most claims create nothing
// (replays, 409s, 422s), and deriving the key is an HMAC per request, so a candidate the
// database did not store is kept for this process's next claim of the same tenant.
// Not a lock and not a cache of anything stored: a candidate is taken out before the query
// (two concurrent claims never hold the same one) and put back only when the answer names
// another operation, i.e. the id was never written. The unique primary key stays the
// authority; a candidate lost to an error is simply dropped.
export type ClaimCandidate = { tenantId: string; operationId: string; downstreamKey: string; secret: string };

const spare = new Map<string, ClaimCandidate>();
// One spare per tenant; the bound only matters for a process serving very many tenants.
const MAX_SPARE = 1_000;

export function takeClaimCandidate(tenantId: string, secret: string): ClaimCandidate {
  const kept = spare.get(tenantId);
  spare.delete(tenantId);
  // The key is derived with the server secret: a candidate made with another one is of no use.
  if (kept && kept.secret === secret) return kept;
  const operationId = newOperationId();
  return { tenantId, operationId, downstreamKey: downstreamKey({ secret, tenantId, operationId }), secret };
}

// `storedOperationId`: the operation the claim's answer is about (none for e.g. an unknown tool).
export function returnClaimCandidate(candidate: ClaimCandidate, storedOperationId: string | undefined): void {
  if (storedOperationId === candidate.operationId || spare.has(candidate.tenantId)) return;
  if (spare.size >= MAX_SPARE) spare.clear();
  spare.set(candidate.tenantId, candidate);
}
