import type { Json } from "@/lib/operations/canonical-json";

// The demo history as a plan: which operations the demo agents start, and every step of each
// (claim, heartbeat, complete, approval decision, operator resolution) at the moment it should
// appear to have happened, over the last three days. Pure and deterministic (a seeded PRNG),
// so every fresh `npm start` tells the same stories; lib/seed/seed-demo-operations.ts replays
// the plan through the product's own functions.

export type DemoAgent = "support-bot" | "demo-agent" | "legacy-agent" | "billing-worker-a" | "billing-worker-b" | "release-bot";
export type DemoPerson = "riley" | "sam" | "admin";

type Result = { statusCode?: number; body?: Json; resourceId?: string };
type Failure = { code: string; message: string };

export type DemoAction =
  // expire: first make the lease / backoff / approval run out (by moving its deadline to now),
  // as if that much time had really passed since the previous step.
  | { kind: "claim"; agent?: DemoAgent; args?: Record<string, Json>; expire?: "lease" | "backoff" | "approval" }
  | { kind: "heartbeat" }
  | { kind: "complete"; outcome: "succeeded" | "failed" | "unknown"; retryable?: boolean; result?: Result; error?: Failure; provider?: { requestId?: string; resourceId?: string } }
  | { kind: "decide"; decision: "approve" | "reject"; reason: string }
  | { kind: "resolve"; outcome: "succeeded" | "failed" | "retry"; reason: string; resourceId?: string; evidence?: string; expireLease?: boolean };

export type DemoOp = { ref: number; tool: string; agent: DemoAgent; idempotencyKey: string; args: Record<string, Json>; workflowId?: string };

export type DemoEvent =
  | { at: number; op: DemoOp; action: DemoAction }
  | { at: number; admin: { kind: "revoke-key"; agent: DemoAgent } | { kind: "disable-user"; person: "jordan" } | { kind: "describe-tool"; tool: string; description: string } };

export type DemoPlan = { ops: DemoOp[]; events: DemoEvent[]; setupAt: number };

const S = 1000;
const M = 60 * S;
const H = 60 * M;

type Rng = () => number;

// mulberry32: tiny, fast, good enough to make demo data look random but always the same.
function prng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function buildDemoPlan(options: { now: number; seed?: number }): DemoPlan {
  const rng = prng(options.seed ?? 20261129);
  const b = new PlanBuilder(rng, options.now);
  addTicketStories(b);
  addPaymentStories(b);
  addDeployStories(b);
  const { now } = options;
  b.events.push({ at: now - 72.9 * H, admin: { kind: "describe-tool", tool: "tickets.create", description: "Open a support ticket in Zendesk" } });
  b.events.push({ at: now - 50 * H, admin: { kind: "revoke-key", agent: "legacy-agent" } });
  b.events.push({ at: now - 30 * H, admin: { kind: "disable-user", person: "jordan" } });
  // Stable order: by time, then by the order the stories were written.
  const events = b.events.map((e, i) => ({ e, i })).sort((x, y) => x.e.at - y.e.at || x.i - y.i).map((x) => x.e);
  return { ops: b.ops, events, setupAt: now - 74 * H };
}

type Step = [offset: number, action: DemoAction];

class PlanBuilder {
  ops: DemoOp[] = [];
  events: DemoEvent[] = [];
  private seq = 0;
  constructor(
    readonly rng: Rng,
    readonly now: number,
  ) {}

  int(min: number, max: number): number {
    return min + Math.floor(this.rng() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.rng() * items.length)] as T;
  }
  chance(p: number): boolean {
    return this.rng() < p;
  }
  id(): number {
    return 40_000 + ++this.seq * 7 + this.int(0, 6);
  }

  // When a story starts: busier recently (about half in the last 24 h), a fifth in bursts
  // (an agent working through a queue), quieter at night.
  start(): number {
    const bursts = [3 * H, 9.5 * H, 20 * H, 27 * H, 45 * H, 52 * H, 68 * H];
    if (this.chance(0.2)) return this.now - this.pick(bursts) + (this.rng() - 0.5) * 24 * M;
    for (;;) {
      const t = this.now - 71 * H * Math.pow(this.rng(), 1.6);
      const hour = new Date(t).getUTCHours();
      if (hour >= 7 && hour <= 20) return t;
      if (this.chance(0.35)) return t;
    }
  }

  // Schedules a story; one whose last step would be in the last minute moves back by a random
  // while (not to one shared moment, which would read as a burst that never happened).
  story(op: Omit<DemoOp, "ref">, steps: Step[], startAt = this.start()): number {
    const last = Math.max(...steps.map(([offset]) => offset));
    const t0 = startAt + last > this.now - M ? this.now - M - last - this.rng() * 6 * H : startAt;
    const full: DemoOp = { ...op, ref: this.ops.length };
    this.ops.push(full);
    for (const [offset, action] of steps) this.events.push({ at: t0 + offset, op: full, action });
    return t0;
  }

  // A story that ends in a state that depends on "now" (live lease, awaiting approval): its
  // last step is at exactly `endsAgo` before now.
  recent(op: Omit<DemoOp, "ref">, steps: Step[], endsAgo: number): void {
    const last = Math.max(...steps.map(([offset]) => offset));
    const full: DemoOp = { ...op, ref: this.ops.length };
    this.ops.push(full);
    for (const [offset, action] of steps) this.events.push({ at: this.now - endsAgo - last + offset, op: full, action });
  }
}

// ---- content -----------------------------------------------------------------------------

const customers = ["ana.lima@northwind.example", "b.okafor@contoso.example", "chen.wei@fabrikam.example", "dmitri@tailspin.example", "eva.nilsson@wingtip.example", "farah.k@adventure.example", "george@litware.example", "hana.sato@proseware.example"];
const subjects = ["Invoice shows the wrong VAT number", "Cannot reset my password", "Double charge on my card", "Export to CSV times out", "Please close my account", "Refund for order not received", "2FA codes not arriving", "Upgrade to the team plan", "Webhook deliveries failing since Tuesday"];
const services = ["api", "web", "billing-worker", "search"];

function ticketOp(b: PlanBuilder, agent: DemoAgent = b.chance(0.7) ? "support-bot" : "demo-agent"): Omit<DemoOp, "ref"> {
  const conversation = b.id();
  return {
    tool: "tickets.create",
    agent,
    idempotencyKey: `conv-${conversation}:create-ticket`,
    args: { requester: b.pick(customers), subject: b.pick(subjects), priority: b.pick(["low", "normal", "normal", "high", "urgent"]), channel: b.pick(["chat", "email"]) },
    workflowId: `conv_${conversation}`,
  };
}

function ticketDone(b: PlanBuilder): DemoAction {
  const n = b.id();
  return {
    kind: "complete",
    outcome: "succeeded",
    result: { statusCode: 201, body: { id: n, url: `https://support.example.com/agent/tickets/${n}` }, resourceId: `T-${n}` },
    provider: { requestId: `zd-${n.toString(36)}${b.int(100, 999)}`, resourceId: `T-${n}` },
  };
}

function chargeOp(b: PlanBuilder): Omit<DemoOp, "ref"> {
  const invoice = `in_${b.id().toString(36)}${b.int(1000, 9999)}`;
  return {
    tool: "payments.charge",
    agent: b.chance(0.6) ? "billing-worker-a" : "billing-worker-b",
    idempotencyKey: `charge-${invoice}`,
    args: { customer: `cus_${b.id().toString(36)}`, invoice, amountCents: b.pick([1900, 4900, 9900, 12_000, 24_900, 49_900, 2500]), currency: b.pick(["eur", "eur", "usd", "gbp"]) },
  };
}

function chargeDone(b: PlanBuilder, op: Omit<DemoOp, "ref">): DemoAction {
  const charge = `ch_3P${b.id().toString(36)}${b.int(10_000, 99_999)}`;
  return {
    kind: "complete",
    outcome: "succeeded",
    result: { statusCode: 200, body: { id: charge, status: "succeeded", amount: op.args.amountCents ?? 0, currency: op.args.currency ?? "eur" }, resourceId: charge },
    provider: { requestId: `req_${b.id().toString(36)}${b.int(100, 999)}`, resourceId: charge },
  };
}

function deployOp(b: PlanBuilder): Omit<DemoOp, "ref"> {
  const service = b.pick(services);
  const version = `v1.${b.int(38, 47)}.${b.int(0, 9)}`;
  return {
    tool: "deploy.production",
    agent: "release-bot",
    idempotencyKey: `release-${service}-${version}-${b.id()}`,
    args: { service, version, commit: b.id().toString(16).padStart(7, "a").slice(0, 7), strategy: "canary" },
    workflowId: `release_${service}_${version}`,
  };
}

const claim = (extra: Partial<Extract<DemoAction, { kind: "claim" }>> = {}): DemoAction => ({ kind: "claim", ...extra });
const retryable = (error: Failure): DemoAction => ({ kind: "complete", outcome: "failed", retryable: true, error });
const failed = (error: Failure, statusCode?: number): DemoAction => ({ kind: "complete", outcome: "failed", error, ...(statusCode ? { result: { statusCode } } : {}) });
const unknownReport = (error: Failure): DemoAction => ({ kind: "complete", outcome: "unknown", error });

const zendesk503 = { code: "provider-unavailable", message: "Zendesk answered 503 Service Unavailable" };
const stripe429 = { code: "rate-limited", message: "Stripe answered 429 Too Many Requests (rate limit)" };

// How an operator settles an unknown outcome, by how long it has been waiting: recent ones
// are still in the queue, older ones mostly resolved.
function settle(b: PlanBuilder, startedAgo: number, resolution: () => Step[]): Step[] {
  const p = startedAgo > 24 * H ? 0.85 : startedAgo > 6 * H ? 0.5 : 0;
  return b.chance(p) ? resolution() : [];
}

// ---- tickets.create: takeover "never", so an expired lease makes the outcome unknown -------

function addTicketStories(b: PlanBuilder): void {
  for (let i = 0; i < 112; i++) {
    const r = b.rng();
    const t0 = b.start();
    // The legacy key was used until it was revoked 50 hours ago.
    const agent = t0 < b.now - 50 * H && b.chance(0.4) ? "legacy-agent" : undefined;
    const op = ticketOp(b, agent);
    const ok = ticketDone(b);
    const took = b.int(400, 2600);
    if (r < 0.46) b.story(op, [[0, claim()], [took, ok]], t0);
    else if (r < 0.58) {
      const replays: Step[] = Array.from({ length: b.int(1, 3) }, (_, k) => [took + (k + 1) * b.int(40, 900) * S, claim()]);
      b.story(op, [[0, claim()], [took, ok], ...replays], t0);
    } else if (r < 0.67) {
      const retryAt = took + b.int(2, 40) * S;
      b.story(op, [[0, claim()], [took, retryable(zendesk503)], [retryAt, claim({ expire: "backoff" })], [retryAt + b.int(500, 2000), ok]], t0);
    } else if (r < 0.7) {
      const steps: Step[] = [];
      for (let k = 0; k < 3; k++) steps.push([k * 45 * S, claim({ expire: k ? "backoff" : undefined })], [k * 45 * S + 30 * S - b.int(0, 2000), retryable(zendesk503)]);
      b.story(op, steps, t0);
    } else if (r < 0.75) {
      b.story(op, [[0, claim()], [took, failed({ code: "validation-error", message: "Zendesk rejected the ticket: requester email is not verified" }, 422)]], t0);
    } else if (r < 0.84) {
      // The worker died mid-call; the agent's retry finds the lease expired: outcome unknown.
      const lost = b.int(2, 15) * M;
      const steps: Step[] = [[0, claim()], [lost, claim({ expire: "lease" })]];
      if (b.chance(0.4)) steps.push([lost + b.int(5, 40) * M, claim()]);
      const last = Math.max(...steps.map(([o]) => o));
      steps.push(
        ...settle(b, b.now - t0, (): Step[] => {
          const at = last + b.int(20, 300) * M;
          const kind = b.rng();
          const n = b.id();
          if (kind < 0.5) return [[at, { kind: "resolve", outcome: "succeeded", resourceId: `T-${n}`, reason: `Ticket T-${n} exists in Zendesk for this requester, created by the integration`, evidence: `Zendesk search requester:${String(op.args.requester)} created>${new Date(t0).toISOString().slice(0, 16)}` }]];
          if (kind < 0.8) return [[at, { kind: "resolve", outcome: "failed", reason: "No ticket in Zendesk for this requester in that window: nothing was created", evidence: "Zendesk audit log checked for ±15 minutes" }]];
          return [[at, { kind: "resolve", outcome: "retry", reason: "Zendesk incident at that time (status page); the ticket was never created, safe to try again" }], [at + b.int(2, 30) * M, claim()], [at + b.int(31, 35) * M, ok]];
        }),
      );
      b.story(op, steps, t0);
    } else if (r < 0.88) {
      const steps: Step[] = [[0, claim()], [30 * S - 200, unknownReport({ code: "timeout", message: "Zendesk did not answer within 30 s; the ticket may have been created" })]];
      steps.push(...settle(b, b.now - t0, () => [[b.int(1, 4) * H, { kind: "resolve", outcome: "succeeded", resourceId: `T-${b.id()}`, reason: "Found the ticket in Zendesk; it was created before the timeout", evidence: "Zendesk ticket view, created 2 s before the agent gave up" }]]));
      b.story(op, steps, t0);
    } else if (r < 0.94) {
      // The same conversation key reused for a different ticket: 422, nothing stored.
      b.story(op, [[0, claim()], [took, ok], [took + b.int(2, 50) * M, claim({ args: { ...op.args, priority: "urgent", subject: b.pick(subjects) } })]], t0);
    } else {
      // A second worker picks up the same conversation while the first is still calling Zendesk.
      b.story(op, [[0, claim()], [b.int(300, 1500), claim()], [took + 1500, ok]], t0);
    }
  }
  // States that only exist near "now".
  b.recent(ticketOp(b), [[0, claim()]], 4 * S);
  b.recent(ticketOp(b), [[0, claim()]], 11 * S);
  b.recent(ticketOp(b), [[0, claim()]], 38 * M);
  b.recent(ticketOp(b), [[0, claim()]], 3.2 * H);
  b.recent(ticketOp(b), [[0, claim()], [2 * S, retryable(zendesk503)]], 25 * S);
  b.recent(ticketOp(b), [[0, claim()], [30 * S, claim({ expire: "lease" })]], 14 * M);
  b.recent(ticketOp(b), [[0, claim()], [29 * S, unknownReport({ code: "timeout", message: "Zendesk did not answer within 30 s; the ticket may have been created" })]], 47 * M);
}

// ---- payments.charge: takeover "deduplicated" (Stripe dedupes on the downstream key) ------

function addPaymentStories(b: PlanBuilder): void {
  for (let i = 0; i < 104; i++) {
    const r = b.rng();
    const t0 = b.start();
    const op = chargeOp(b);
    const other: DemoAgent = op.agent === "billing-worker-a" ? "billing-worker-b" : "billing-worker-a";
    const ok = chargeDone(b, op);
    const took = b.int(600, 4000);
    if (r < 0.45) b.story(op, [[0, claim()], [took, ok]], t0);
    else if (r < 0.55) {
      const replays: Step[] = Array.from({ length: b.int(1, 4) }, (_, k) => [took + (k + 1) * b.int(20, 600) * S, claim()]);
      b.story(op, [[0, claim()], [took, ok], ...replays], t0);
    } else if (r < 0.65) {
      const retries = b.int(1, 3);
      const steps: Step[] = [[0, claim()]];
      let t = took;
      for (let k = 0; k < retries; k++) {
        steps.push([t, retryable(stripe429)]);
        t += b.int(1, 20) * S;
        steps.push([t, claim({ expire: "backoff" })]);
        t += b.int(500, 3000);
      }
      steps.push([t, ok]);
      b.story(op, steps, t0);
    } else if (r < 0.72) {
      b.story(op, [[0, claim()], [took, failed({ code: "card-declined", message: "Your card has insufficient funds (decline_code insufficient_funds)" }, 402)]], t0);
    } else if (r < 0.8) {
      // A worker dies holding the lease; the other worker takes over with a larger fencing token.
      const takeover = 60 * S + b.int(5, 240) * S;
      const steps: Step[] = [[0, claim()], [b.int(20, 40) * S, { kind: "heartbeat" }], [takeover + b.int(60, 200) * S, claim({ agent: other, expire: "lease" })]];
      if (b.chance(0.25)) steps.push([takeover + 400 * S, claim({ agent: op.agent, expire: "lease" })]);
      const last = Math.max(...steps.map(([o]) => o));
      steps.push([last + took, ok]);
      b.story(op, steps, t0);
    } else if (r < 0.87) {
      const steps: Step[] = [[0, claim()], [30 * S, unknownReport({ code: "timeout", message: "Stripe did not answer within 30 s; the charge may have gone through" })]];
      steps.push(
        ...settle(b, b.now - t0, (): Step[] => {
          const at = b.int(1, 20) * H;
          if (b.chance(0.6)) {
            const charge = `ch_3P${b.id().toString(36)}`;
            return [[at, { kind: "resolve", outcome: "succeeded", resourceId: charge, reason: `Stripe shows ${charge} for this downstream key; the customer was charged once`, evidence: "Stripe dashboard → Payments, filtered by idempotency key" }]];
          }
          return [[at, { kind: "resolve", outcome: "failed", reason: "Stripe has no payment for this downstream key: the customer was not charged", evidence: "Stripe API GET /v1/payment_intents?idempotency_key=… returned nothing" }]];
        }),
      );
      b.story(op, steps, t0);
    } else if (r < 0.92) {
      b.story(op, [[0, claim()], [took, ok], [took + b.int(1, 30) * M, claim({ args: { ...op.args, amountCents: Number(op.args.amountCents ?? 0) + 1000 } })]], t0);
    } else {
      b.story(op, [[0, claim()], [b.int(200, 500), claim({ agent: other })], [took + 600, ok]], t0);
    }
  }
  // A worker crashed, an operator settled it from the evidence, then the worker came back and
  // reported the opposite: the operation is flagged for a person to look at.
  const crashed = chargeOp(b);
  b.story(crashed, [
    [0, claim()],
    [25 * M, { kind: "resolve", outcome: "failed", expireLease: true, reason: "Worker crashed mid-call; Stripe showed no payment for this downstream key", evidence: "Stripe dashboard search by downstream key" }],
    [31 * M, chargeDone(b, crashed)],
  ], b.now - 19 * H);
  b.recent(chargeOp(b), [[0, claim()]], 6 * S);
  b.recent(chargeOp(b), [[0, claim()], [20 * S, { kind: "heartbeat" }]], 15 * S);
  b.recent(chargeOp(b), [[0, claim()]], 52 * M);
  b.recent(chargeOp(b), [[0, claim()], [3 * S, retryable(stripe429)]], 50 * S);
  b.recent(chargeOp(b), [[0, claim()], [2 * S, retryable(stripe429)], [20 * S, claim({ expire: "backoff" })], [23 * S, retryable(stripe429)]], 2 * M);
  b.recent(chargeOp(b), [[0, claim()], [30 * S, unknownReport({ code: "connection-reset", message: "Connection reset while waiting for Stripe's answer" })]], 2.4 * H);
}

// ---- deploy.production: a person approves these exact arguments first -------------------

function addDeployStories(b: PlanBuilder): void {
  const approve = (reason: string): DemoAction => ({ kind: "decide", decision: "approve", reason });
  const reasons = ["Change reviewed, canary plan looks fine", "Within the release window; on-call informed", "Hotfix for the VAT bug, approved", "Release notes checked"];
  for (let i = 0; i < 36; i++) {
    const r = b.rng();
    const op = deployOp(b);
    const decided = b.int(2, 40) * M;
    const run = decided + b.int(10, 120) * S;
    const heartbeats: Step[] = [[run + 2 * M, { kind: "heartbeat" }], [run + 4 * M, { kind: "heartbeat" }]];
    const end = run + b.int(5, 9) * M;
    const dep = `dep_${b.id().toString(36)}`;
    const done: DemoAction = { kind: "complete", outcome: "succeeded", result: { statusCode: 200, body: { deployment: dep, status: "healthy", canary: "100%" }, resourceId: dep } };
    // The agent polls while it waits for a person.
    const poll: Step[] = b.chance(0.5) ? [[decided / 2, claim()]] : [];
    if (r < 0.55) b.story(op, [[0, claim()], ...poll, [decided, approve(b.pick(reasons))], [run, claim()], ...heartbeats, [end, done]]);
    else if (r < 0.67) b.story(op, [[0, claim()], [decided, approve(b.pick(reasons))], [run, claim()], [run + 2 * M, { kind: "heartbeat" }], [end, failed({ code: "health-check-failed", message: "Canary error rate 7.9% > 2% for 3 minutes; rolled back" })]]);
    else if (r < 0.85) {
      const why = b.pick(["Release freeze until Monday", "This version still has the migration bug (INC-2231)", "Wrong commit: this is not the reviewed one", "Not during peak hours, please retry after 18:00"]);
      b.story(op, [[0, claim()], ...poll, [decided, { kind: "decide", decision: "reject", reason: why }]]);
    } else b.story(op, [[0, claim()], [b.int(30, 55) * M, claim()], [b.int(61, 180) * M, claim({ expire: "approval" })]]);
  }
  const lost = deployOp(b);
  b.story(lost, [[0, claim()], [12 * M, approve("Approved for the evening window")], [13 * M, claim()], [15 * M, { kind: "heartbeat" }], [17 * M, unknownReport({ code: "controller-disconnected", message: "Lost the connection to the deploy controller mid-rollout" })]], b.now - 9 * H);
  for (const ago of [3 * M, 17 * M, 34 * M, 51 * M]) b.recent(deployOp(b), [[0, claim()]], ago);
  b.recent(deployOp(b), [[0, claim()], [9 * M, approve("Go")], [10 * M, claim()], [12 * M, { kind: "heartbeat" }]], 70 * S);
}
