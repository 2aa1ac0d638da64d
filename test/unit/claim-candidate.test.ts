import { describe, expect, it } from "vitest";
import { returnClaimCandidate, takeClaimCandidate } from "@/lib/operations/claim-candidate";
import { downstreamKey } from "@/lib/operations/downstream-key";

const SECRET = "candidate-secret-0123456789abcdef0123";

// A claim's candidate id must never be handed to two claims, and never reused once stored.
describe("claim candidates", () => {
  it("derives the downstream key from the candidate's own id and tenant", () => {
    const c = takeClaimCandidate("ten_a1", SECRET);
    expect(c.operationId).toMatch(/^op_/);
    expect(c.downstreamKey).toBe(downstreamKey({ secret: SECRET, tenantId: "ten_a1", operationId: c.operationId }));
  });

  it("keeps a candidate the answer did not store for the tenant's next claim", () => {
    const c = takeClaimCandidate("ten_a2", SECRET);
    returnClaimCandidate(c, "op_someone_else");
    expect(takeClaimCandidate("ten_a2", SECRET)).toBe(c);
  });

  it("never offers a stored candidate again", () => {
    const c = takeClaimCandidate("ten_a3", SECRET);
    returnClaimCandidate(c, c.operationId);
    expect(takeClaimCandidate("ten_a3", SECRET).operationId).not.toBe(c.operationId);
  });

  it("gives concurrent claims different candidates, and keeps only one spare", () => {
    const first = takeClaimCandidate("ten_a4", SECRET);
    const second = takeClaimCandidate("ten_a4", SECRET);
    expect(second.operationId).not.toBe(first.operationId);
    returnClaimCandidate(first, undefined);
    returnClaimCandidate(second, undefined);
    expect(takeClaimCandidate("ten_a4", SECRET)).toBe(first);
    expect(takeClaimCandidate("ten_a4", SECRET).operationId).not.toBe(second.operationId);
  });

  it("does not cross tenants or secrets", () => {
    const c = takeClaimCandidate("ten_a5", SECRET);
    returnClaimCandidate(c, undefined);
    expect(takeClaimCandidate("ten_a6", SECRET).operationId).not.toBe(c.operationId);
    expect(takeClaimCandidate("ten_a5", `${SECRET}-rotated`).operationId).not.toBe(c.operationId);
  });
});
