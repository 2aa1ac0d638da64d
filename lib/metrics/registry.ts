import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";

// One registry per process; each app instance exposes its own figures at /api/metrics
// and Prometheus sums them. Kept on globalThis because Next dev reloads modules.
type Metrics = ReturnType<typeof createMetrics>;
const globalForMetrics = globalThis as unknown as { tollgateMetrics?: Metrics; tollgateRefusedBeforeMetrics?: Record<string, number> };

function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "tollgate_" });
  return {
    registry,
    claims: new Counter({
      name: "tollgate_claims_total",
      help: "Claims by result code (created, awaiting-approval, replayed, or the problem code)",
      labelNames: ["result"] as const,
      registers: [registry],
    }),
    completes: new Counter({
      name: "tollgate_completes_total",
      help: "Completes by reported outcome and result",
      labelNames: ["outcome", "result"] as const,
      registers: [registry],
    }),
    takeovers: new Counter({ name: "tollgate_takeovers_total", help: "Expired leases taken over by a new attempt", registers: [registry] }),
    unknowns: new Counter({
      name: "tollgate_unknowns_total",
      help: "Operations that became unknown, by cause",
      labelNames: ["cause"] as const,
      registers: [registry],
    }),
    replays: new Counter({ name: "tollgate_replays_total", help: "Stored results replayed", registers: [registry] }),
    resolutions: new Counter({
      name: "tollgate_resolutions_total",
      help: "Operator resolutions by outcome",
      labelNames: ["outcome"] as const,
      registers: [registry],
    }),
    approvalDecisions: new Counter({
      name: "tollgate_approval_decisions_total",
      help: "Approval decisions by people, by decision",
      labelNames: ["decision"] as const,
      registers: [registry],
    }),
    // Incremented only where an expiry is written (a claim, a decision or the sweep), so each counts once.
    approvalExpiries: new Counter({
      name: "tollgate_approval_expiries_total",
      help: "Approvals that expired: undecided past their expiry, or approved but not acted on before their use-by",
      registers: [registry],
    }),
    claimSeconds: new Histogram({
      name: "tollgate_claim_duration_seconds",
      help: "Claim latency inside the server",
      buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers: [registry],
    }),
    dbQueries: new Counter({ name: "tollgate_db_queries_total", help: "SQL statements sent to PostgreSQL", registers: [registry] }),
    httpRequests: new Counter({
      name: "tollgate_http_requests_total",
      help: "HTTP requests by route and status",
      labelNames: ["route", "status"] as const,
      registers: [registry],
    }),
  };
}

export function metrics(): Metrics {
  if (!globalForMetrics.tollgateMetrics) {
    const made = createMetrics();
    // Requests lib/http/front-door.cjs refused before any route made these metrics.
    for (const [status, count] of Object.entries(globalForMetrics.tollgateRefusedBeforeMetrics ?? {})) {
      made.httpRequests.inc({ route: "(before routing)", status }, count);
    }
    globalForMetrics.tollgateRefusedBeforeMetrics = undefined;
    globalForMetrics.tollgateMetrics = made;
  }
  return globalForMetrics.tollgateMetrics;
}
