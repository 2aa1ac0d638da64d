import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import type { Db } from "@/lib/db";
import { call, claim, type Reply } from "./http";
import type { TenantKeys } from "./test-app";

// Realistic operations for the console's browser tests, made only through the real agent API
// (claim, complete, re-claim), so every row, attempt, counter and audit event is what a real
// agent would leave behind. Lease expiry is waited for on the database's own clock (the one the
// SQL functions compare with), never with a fixed sleep.

export type World = { baseUrl: string; db: Db; keys: TenantKeys };

export type AgentOp = {
  operationId: string;
  tool: string;
  // The raw Idempotency-Key the agent sent: the console must never show it.
  idem: string;
  args: Record<string, unknown>;
  token: string;
};

// The tools the mixes use: one whose lease expiry makes the outcome unknown, one that retries
// almost at once (1 ms backoff, so a retry never waits on a long clock), one with a long lease.
export const TOOLS = {
  tickets: "tickets.create",
  payments: "payments.charge",
  email: "email.send",
} as const;

export async function putTool(world: World, name: string, policy: Record<string, unknown>): Promise<void> {
  const res = await call(world.baseUrl, "PUT", `/api/v1/tools/${name}`, { key: world.keys.admin, body: { description: `${name} (test)`, policy } });
  expect([200, 201], res.text).toContain(res.status);
}

export async function putStandardTools(world: World): Promise<void> {
  await putTool(world, TOOLS.tickets, { leaseSeconds: 1, takeover: "never", maxAttempts: 3 });
  await putTool(world, TOOLS.payments, { leaseSeconds: 600, takeover: "never", maxAttempts: 3, backoff: { baseMs: 1, capMs: 1 } });
  await putTool(world, TOOLS.email, { leaseSeconds: 600, takeover: "never", maxAttempts: 2 });
}

export async function claimNew(world: World, tool: string, options: { args?: Record<string, unknown>; workflowId?: string; key?: string } = {}): Promise<AgentOp> {
  const idem = `raw-idem-${randomUUID()}`;
  const args = options.args ?? { title: `call ${idem.slice(-8)}`, amount: 4200, customer: { id: "cus_1", tags: ["vip", "eu"] } };
  const body: Record<string, unknown> = { tool, args };
  if (options.workflowId) body.workflowId = options.workflowId;
  const res = await claim(world.baseUrl, options.key ?? world.keys.agent, idem, body);
  expect(res.status, res.text).toBe(201);
  return { operationId: res.body.operationId, tool, idem, args, token: res.body.attempt.fencingToken };
}

// The same key again (a retry by the agent), with the same or different arguments.
export function reclaim(world: World, op: AgentOp, args: Record<string, unknown> = op.args): Promise<Reply> {
  return claim(world.baseUrl, world.keys.agent, op.idem, { tool: op.tool, args });
}

export async function complete(world: World, op: AgentOp, body: Record<string, unknown>): Promise<Reply> {
  const res = await call(world.baseUrl, "POST", `/api/v1/operations/${op.operationId}/complete`, {
    key: world.keys.agent,
    body: { fencingToken: op.token, ...body },
  });
  expect(res.status, res.text).toBe(200);
  return res;
}

export const succeed = (world: World, op: AgentOp, resourceId = `R-${op.operationId.slice(-6)}`) =>
  complete(world, op, { outcome: "succeeded", result: { statusCode: 201, body: { id: resourceId }, resourceId }, provider: { requestId: `req_${op.operationId.slice(-6)}` } });

export const fail = (world: World, op: AgentOp) => complete(world, op, { outcome: "failed", error: { code: "card_declined", message: "The card was declined." } });

// The executor lost track of the provider call and says so: state unknown.
export const reportUnknown = (world: World, op: AgentOp) => complete(world, op, { outcome: "unknown", error: { code: "timeout", message: "provider timed out after 30 s" } });

// Polls `check` (a query against the database clock) until it holds.
export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// Every lease of these operations is over by the database's clock (with a margin).
export function waitUntilLeasesExpired(world: World, ops: AgentOp[]): Promise<void> {
  const ids = ops.map((o) => o.operationId);
  return waitFor(`the leases of ${ids.length} operations expired`, async () => {
    const [row] = await world.db.$queryRaw<{ live: number }[]>`
      SELECT count(*)::int AS live FROM operation
      WHERE id = ANY (${ids}::text[]) AND (lease_expires_at IS NULL OR now() <= lease_expires_at + interval '200 milliseconds')`;
    return row?.live === 0;
  });
}

// Claims on a takeover-never tool whose 1 s lease runs out; the next claim of each finds the
// lease expired and declares the outcome unknown (409 outcome-unknown). Claimed one after the
// other, so their creation times (the queue's order) are distinct and known.
export async function unknownsByExpiry(world: World, count: number): Promise<AgentOp[]> {
  const ops: AgentOp[] = [];
  for (let i = 0; i < count; i++) ops.push(await claimNew(world, TOOLS.tickets, { args: { title: `ticket #${i + 1}`, priority: i % 3 === 0 ? "high" : "normal" }, workflowId: `wf-tickets-${i + 1}` }));
  await waitUntilLeasesExpired(world, ops);
  for (const op of ops) {
    const again = await reclaim(world, op);
    expect([again.status, again.body?.code], again.text).toEqual([409, "outcome-unknown"]);
  }
  return ops;
}

// Failed with retryable: true, retried after the (1 ms) backoff, then finished.
export async function retried(world: World, finish: "succeeded" | "failed"): Promise<AgentOp> {
  const first = await claimNew(world, TOOLS.payments);
  await complete(world, first, { outcome: "failed", retryable: true, error: { code: "rate_limited", message: "provider said 429" } });
  await waitFor("the retry backoff is over", async () => {
    const [row] = await world.db.$queryRaw<{ due: boolean }[]>`
      SELECT state = 'pending' AND (not_before IS NULL OR not_before <= now()) AS due FROM operation WHERE id = ${first.operationId}`;
    return row?.due === true;
  });
  const again = await reclaim(world, first);
  expect(again.status, again.text).toBe(201);
  const second = { ...first, token: again.body.attempt.fencingToken as string };
  if (finish === "succeeded") await succeed(world, second);
  else await fail(world, second);
  return second;
}

export type Mix = {
  all: AgentOp[];
  succeeded: AgentOp[];
  failed: AgentOp[];
  unknown: AgentOp[];
  processing: AgentOp[];
  pending: AgentOp[];
  retried: AgentOp[];
};

// About `scale` × 30 operations (60 at the default) across the three tools and every everyday state, with the
// traffic a busy tenant sees: replays of finished calls, 409s while in progress, 422s for a
// key reused with other arguments.
export async function createMix(world: World, scale = 2): Promise<Mix> {
  const n = (k: number) => k * scale;
  const mix: Mix = { all: [], succeeded: [], failed: [], unknown: [], processing: [], pending: [], retried: [] };
  const keep = (bucket: AgentOp[], ops: AgentOp[]) => {
    bucket.push(...ops);
    mix.all.push(...ops);
    return ops;
  };
  // The expiring ones first: their leases run out while the rest is being made.
  const expiring = await Promise.all(Array.from({ length: n(4) }, (_, i) => claimNew(world, TOOLS.tickets, { args: { title: `ticket #${i + 1}` } })));

  const ok = keep(mix.succeeded, await pool(n(10), (i) => claimNew(world, i % 2 ? TOOLS.email : TOOLS.payments, { workflowId: `wf-${i % 5}` })));
  await pool(ok.length, (i) => succeed(world, ok[i]!));
  // Replays: the agent retried a finished call and got the stored result.
  for (const op of ok.slice(0, 3)) expect((await reclaim(world, op)).status).toBe(200);
  // A key reused with different arguments: 422, the stored operation is unchanged.
  const mismatch = await reclaim(world, ok[3]!, { ...ok[3]!.args, amount: 9900 });
  expect([mismatch.status, mismatch.body?.code], mismatch.text).toEqual([422, "idempotency-key-reused"]);

  const bad = keep(mix.failed, await pool(n(5), (i) => claimNew(world, i % 2 ? TOOLS.payments : TOOLS.email)));
  await pool(bad.length, (i) => fail(world, bad[i]!));

  const busy = keep(mix.processing, await pool(n(4), () => claimNew(world, TOOLS.email)));
  // A retry while the first attempt still holds its lease: 409 operation-in-progress.
  const inProgress = await reclaim(world, busy[0]!);
  expect([inProgress.status, inProgress.body?.code], inProgress.text).toEqual([409, "operation-in-progress"]);

  const waiting = keep(mix.pending, await pool(n(2), () => claimNew(world, TOOLS.payments)));
  await pool(waiting.length, (i) => complete(world, waiting[i]!, { outcome: "failed", retryable: true, error: { code: "rate_limited", message: "provider said 429" } }));

  keep(mix.unknown, await pool(n(3), async () => {
    const op = await claimNew(world, TOOLS.payments);
    await reportUnknown(world, op);
    return op;
  }));

  for (let i = 0; i < n(2); i++) {
    const op = await retried(world, i % 2 ? "failed" : "succeeded");
    keep(mix.retried, [op]);
    (i % 2 ? mix.failed : mix.succeeded).push(op);
  }

  await waitUntilLeasesExpired(world, expiring);
  for (const op of expiring) {
    const again = await reclaim(world, op);
    expect([again.status, again.body?.code], again.text).toEqual([409, "outcome-unknown"]);
  }
  keep(mix.unknown, expiring);
  return mix;
}

// Runs `make(i)` for i in 0..count-1, four at a time, results in index order.
async function pool<T>(count: number, make: (i: number) => Promise<T>, width = 4): Promise<T[]> {
  const out = new Array<T>(count);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) out[i] = await make(i);
  };
  await Promise.all(Array.from({ length: Math.min(width, count) }, worker));
  return out;
}
