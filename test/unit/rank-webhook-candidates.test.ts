import { describe, expect, it } from "vitest";
import { payloadValues, rankCandidates, type CandidateOperation } from "@/lib/console/rank-webhook-candidates";

// The inbox's candidate ranking on its own: what counts as evidence, in which order.

const at = new Date("2026-11-29T12:00:00Z");
const op = (id: string, tool: string, minutesBefore: number, resourceId: string | null = null): CandidateOperation => ({
  id,
  tool,
  state: "unknown",
  principal: "agent",
  createdAt: new Date(at.getTime() - minutesBefore * 60_000),
  resourceId,
  attempts: 1,
});

describe("rankCandidates", () => {
  const event = { receivedAt: at, eventType: "ticket.created", connectionName: "helpdesk", payload: { data: { ticket: { id: "T-9", number: 42 } } } };

  // Console review, 2026-12-01 night: closeness in time alone put another family's operations
  // (a ticket for a Stripe event) beside the ones the evidence points at.
  it("puts a payload resource id first, then the same tool family; closeness in time alone does not make another family's operation a candidate", () => {
    const ranked = rankCandidates({
      event,
      named: null,
      families: new Set(["tickets"]),
      pool: [op("close-other", "email.send", 1), op("family", "tickets.create", 30), op("resource", "crm.update", 300, "T-9"), op("old-other", "email.send", 600)],
    });
    expect(ranked.map((c) => c.id)).toEqual(["resource", "family"]);
    expect(ranked[0]!.reasons).toEqual(["resource id T-9 appears in the payload"]);
    expect(ranked[1]!.reasons).toContain("same tool family (tickets.*)");
  });

  it("proposes operations close in time when nothing points at any (a connection with no history), oldest-unrelated left out", () => {
    const stripe = { receivedAt: at, eventType: "charge.succeeded", connectionName: "stripe", payload: { data: { id: "ch_1" } } };
    const ranked = rankCandidates({ event: stripe, named: null, families: new Set(), pool: [op("close", "payments.charge", 1), op("old", "payments.charge", 600)] });
    expect(ranked.map((c) => c.id)).toEqual(["close"]);
  });

  it("the event type's prefix counts as a family, singular or plural; numbers in the payload count as values", () => {
    const ranked = rankCandidates({ event, named: null, families: new Set(), pool: [op("by-type", "tickets.create", 300), op("by-number", "crm.update", 300, "42")] });
    expect(ranked.map((c) => c.id)).toEqual(["by-number", "by-type"]);
  });

  it("the operation the event names comes first, marked, and at most five are proposed", () => {
    const pool = Array.from({ length: 10 }, (_, i) => op(`t${i}`, "tickets.create", i));
    const ranked = rankCandidates({ event, named: op("named", "tickets.create", 5), families: new Set(), pool });
    expect(ranked).toHaveLength(5);
    expect(ranked[0]).toMatchObject({ id: "named", named: true, reasons: ["the event names this operation"] });
  });
});

describe("payloadValues", () => {
  it("collects every scalar, however deep, bounded", () => {
    expect([...payloadValues({ a: ["x", { b: 7 }], c: { d: { e: "y" } }, f: null, g: true })].sort()).toEqual(["7", "x", "y"]);
    expect(payloadValues({ list: Array.from({ length: 2000 }, (_, i) => `v${i}`) }).size).toBe(500);
  });
});
